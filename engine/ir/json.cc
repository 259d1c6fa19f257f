#include "engine/ir/json.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::ir {
namespace {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  explicit Parser(absl::string_view s) : s_(s) {}

  absl::StatusOr<Value> ParseAll() {
    SkipWs();
    Value v;
    if (!ParseValue(0, &v)) return Error();
    SkipWs();
    if (pos_ != s_.size()) {
      Fail("unexpected text after the JSON value");
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    int line = 1, col = 1;
    for (size_t i = 0; i < err_pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(line, ":", col, ": ", err_));
  }
  bool Fail(std::string msg) {
    if (err_.empty()) {
      err_ = std::move(msg);
      err_pos_ = pos_;
    }
    return false;
  }
  void SkipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool Literal(absl::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  // `depth` counts the arrays/objects enclosing this value.
  bool ParseValue(int depth, Value* out) {
    if (pos_ >= s_.size()) return Fail("unexpected end of input, expected a value");
    char c = s_[pos_];
    if ((c == '[' || c == '{') && depth >= kMaxDepth) return Fail("nesting deeper than 256 levels");
    switch (c) {
      case 'n':
        if (!Literal("null")) return false;
        *out = Value::Null();
        return true;
      case 't':
        if (!Literal("true")) return false;
        *out = Value::Bool(true);
        return true;
      case 'f':
        if (!Literal("false")) return false;
        *out = Value::Bool(false);
        return true;
      case '"': {
        std::string str;
        if (!ParseString(&str)) return false;
        *out = Value::String(std::move(str));
        return true;
      }
      case '[':
        return ParseList(depth, out);
      case '{':
        return ParseObject(depth, out);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
        return Fail(absl::StrCat("unexpected character '", std::string(1, c), "', expected a value"));
    }
  }

  bool ParseNumber(Value* out) {
    size_t start = pos_;
    bool neg = false;
    if (s_[pos_] == '-') {
      neg = true;
      ++pos_;
    }
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return Fail("expected a digit");
    if (s_[pos_] == '0' && pos_ + 1 < s_.size() && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9')
      return Fail("leading zeros are not allowed in numbers");
    uint64_t mag = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (mag > (UINT64_MAX - d) / 10) {
        pos_ = start;
        return Fail("integer out of 64-bit range");
      }
      mag = mag * 10 + d;
      ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      return Fail("fractional and exponent numbers are not supported (integers only)");
    if ((!neg && mag > static_cast<uint64_t>(INT64_MAX)) || (neg && mag > static_cast<uint64_t>(INT64_MAX) + 1)) {
      pos_ = start;
      return Fail("integer out of 64-bit range");
    }
    *out = Value::Int(neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag));
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Hex4(uint32_t* cp) {
    if (pos_ + 4 > s_.size()) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<uint32_t>(h - 'A' + 10);
      else
        return Fail("invalid hex digit in \\u escape");
    }
    *cp = v;
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string (escape it)");
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return Fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            pos_ -= 6;
            return Fail("unpaired low surrogate");
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (s_.substr(pos_, 2) != "\\u") return Fail("unpaired surrogate");
            pos_ += 2;
            if (!Hex4(&lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return Fail("invalid low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Fail(absl::StrCat("invalid escape '\\", std::string(1, e), "'"));
      }
    }
  }

  bool ParseList(int depth, Value* out) {
    ++pos_;
    std::vector<Value> items;
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      *out = Value::List({});
      return true;
    }
    while (true) {
      SkipWs();
      Value v;
      if (!ParseValue(depth + 1, &v)) return false;
      items.push_back(std::move(v));
      SkipWs();
      if (pos_ >= s_.size()) return Fail("unterminated array, expected ',' or ']'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        break;
      }
      return Fail("expected ',' or ']' in array");
    }
    *out = Value::List(std::move(items));
    return true;
  }

  bool ParseObject(int depth, Value* out) {
    ++pos_;
    MapEntries entries;
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      *out = Value::Map({});
      return true;
    }
    while (true) {
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a string key");
      std::string key;
      if (!ParseString(&key)) return false;
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':' after key");
      ++pos_;
      SkipWs();
      Value v;
      if (!ParseValue(depth + 1, &v)) return false;
      entries.emplace_back(std::move(key), std::move(v));
      SkipWs();
      if (pos_ >= s_.size()) return Fail("unterminated object, expected ',' or '}'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        break;
      }
      return Fail("expected ',' or '}' in object");
    }
    *out = Value::Map(std::move(entries));
    return true;
  }

  absl::string_view s_;
  size_t pos_ = 0;
  std::string err_;
  size_t err_pos_ = 0;
};

void AppendJson(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out->append("null");
      return;
    case Value::Kind::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case Value::Kind::kInt:
      absl::StrAppend(out, v.as_int());
      return;
    case Value::Kind::kString:
      AppendJsonString(v.as_string(), out);
      return;
    case Value::Kind::kList: {
      out->push_back('[');
      bool first = true;
      for (const auto& x : v.as_list()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(x, out);
      }
      out->push_back(']');
      return;
    }
    case Value::Kind::kMap: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, x] : v.as_map()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(k, out);
        out->push_back(':');
        AppendJson(x, out);
      }
      out->push_back('}');
      return;
    }
    case Value::Kind::kOption:
      if (v.has_value()) {
        AppendJson(v.inner(), out);
      } else {
        out->append("null");
      }
      return;
    case Value::Kind::kSym:
      AppendJsonString(sym::TermToString(v.as_term()), out);
      return;
  }
}

}  // namespace

absl::StatusOr<Value> ParseJson(absl::string_view text) { return Parser(text).ParseAll(); }

void AppendJsonString(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          absl::StrAppend(out, "\\u00", absl::Hex(c, absl::kZeroPad2));
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

std::string ToJson(const Value& v) {
  std::string out;
  AppendJson(v, &out);
  return out;
}

}  // namespace dualswarm::ir
