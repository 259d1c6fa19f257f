// sut_json: the small JSON reader the JSON-lines reference servers share
// (ds-ref-kv, ds-ref-queue): one line in, parsed by recursive descent (RFC
// 8259, depth-limited), values kept as canonical text so equality is
// structural; and the error line they answer with.
//
// Deliberately standalone: plain C++20, no engine/ headers.
#ifndef DUALSWARM_TESTS_SUTS_SUT_JSON_H_
#define DUALSWARM_TESTS_SUTS_SUT_JSON_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dsut {

constexpr int kMaxJsonDepth = 64;

// A parsed JSON value, kept as its canonical text (no insignificant
// whitespace, object members sorted by key) plus, for strings, the decoded
// bytes. Canonical text makes equality structural.
struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  std::string canon;
  std::string str;  // decoded, for kString
};

inline void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(ch));
        }
    }
  }
  out->push_back('"');
}

inline void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Recursive-descent parser over one line (RFC 8259). Depth-limited.
class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  // Parses a top-level object into its members (last duplicate wins).
  bool ParseObjectLine(std::map<std::string, Json>* members, std::string* err) {
    SkipWs();
    if (!Peek('{')) return Fail(err, "expected a JSON object");
    Json v;
    if (!ParseValue(&v, 0, members)) return Fail(err, error_);
    SkipWs();
    if (i_ != s_.size()) return Fail(err, "trailing characters after the JSON object");
    return true;
  }

 private:
  bool Fail(std::string* err, const std::string& msg) {
    *err = msg + " at column " + std::to_string(i_ + 1);
    return false;
  }
  bool Error(const char* msg) {
    if (error_.empty()) error_ = msg;
    return false;
  }
  void SkipWs() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_;
  }
  bool Peek(char ch) const { return i_ < s_.size() && s_[i_] == ch; }
  bool Literal(std::string_view lit) {
    if (s_.substr(i_, lit.size()) != lit) return Error("invalid literal");
    i_ += lit.size();
    return true;
  }

  // `top` receives the members when the value is the top-level object.
  bool ParseValue(Json* v, int depth, std::map<std::string, Json>* top = nullptr) {
    if (depth > kMaxJsonDepth) return Error("nesting too deep");
    SkipWs();
    if (i_ >= s_.size()) return Error("unexpected end of input");
    char ch = s_[i_];
    if (ch == '{') {
      ++i_;
      std::map<std::string, Json> members;
      SkipWs();
      if (Peek('}')) {
        ++i_;
      } else {
        for (;;) {
          SkipWs();
          if (!Peek('"')) return Error("expected a member name");
          std::string key;
          if (!ParseString(&key)) return false;
          SkipWs();
          if (!Peek(':')) return Error("expected ':'");
          ++i_;
          Json m;
          if (!ParseValue(&m, depth + 1)) return false;
          members[key] = std::move(m);
          SkipWs();
          if (Peek(',')) {
            ++i_;
            continue;
          }
          if (Peek('}')) {
            ++i_;
            break;
          }
          return Error("expected ',' or '}'");
        }
      }
      v->type = Json::Type::kObject;
      v->canon = "{";
      bool first = true;
      for (const auto& [k, m] : members) {
        if (!first) v->canon += ",";
        first = false;
        AppendQuoted(&v->canon, k);
        v->canon += ":" + m.canon;
      }
      v->canon += "}";
      if (top) *top = std::move(members);
      return true;
    }
    if (ch == '[') {
      ++i_;
      v->type = Json::Type::kArray;
      v->canon = "[";
      SkipWs();
      if (Peek(']')) {
        ++i_;
      } else {
        for (bool first = true;; first = false) {
          Json e;
          if (!ParseValue(&e, depth + 1)) return false;
          if (!first) v->canon += ",";
          v->canon += e.canon;
          SkipWs();
          if (Peek(',')) {
            ++i_;
            continue;
          }
          if (Peek(']')) {
            ++i_;
            break;
          }
          return Error("expected ',' or ']'");
        }
      }
      v->canon += "]";
      return true;
    }
    if (ch == '"') {
      v->type = Json::Type::kString;
      if (!ParseString(&v->str)) return false;
      v->canon.clear();
      AppendQuoted(&v->canon, v->str);
      return true;
    }
    if (ch == 't') {
      v->type = Json::Type::kBool;
      v->canon = "true";
      return Literal("true");
    }
    if (ch == 'f') {
      v->type = Json::Type::kBool;
      v->canon = "false";
      return Literal("false");
    }
    if (ch == 'n') {
      v->type = Json::Type::kNull;
      v->canon = "null";
      return Literal("null");
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) return ParseNumber(v);
    return Error("unexpected character");
  }

  bool ParseNumber(Json* v) {
    size_t start = i_;
    auto digits = [&] {
      size_t b = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > b;
    };
    if (Peek('-')) ++i_;
    if (Peek('0')) {
      ++i_;
    } else if (!digits()) {
      return Error("invalid number");
    }
    if (Peek('.')) {
      ++i_;
      if (!digits()) return Error("invalid number");
    }
    if (Peek('e') || Peek('E')) {
      ++i_;
      if (Peek('+') || Peek('-')) ++i_;
      if (!digits()) return Error("invalid number");
    }
    v->type = Json::Type::kNumber;
    v->canon = std::string(s_.substr(start, i_ - start));
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (i_ + 4 > s_.size()) return Error("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char ch = s_[i_++];
      int d = (ch >= '0' && ch <= '9')   ? ch - '0'
              : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
              : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                         : -1;
      if (d < 0) return Error("invalid \\u escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    *out = v;
    return true;
  }

  bool ParseString(std::string* out) {
    ++i_;  // opening quote
    out->clear();
    for (;;) {
      if (i_ >= s_.size()) return Error("unterminated string");
      unsigned char ch = static_cast<unsigned char>(s_[i_++]);
      if (ch == '"') return true;
      if (ch < 0x20) return Error("control character in string");
      if (ch != '\\') {
        out->push_back(static_cast<char>(ch));
        continue;
      }
      if (i_ >= s_.size()) return Error("unterminated escape");
      char e = s_[i_++];
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
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t lo;
            if (s_.substr(i_, 2) != "\\u") return Error("unpaired surrogate");
            i_ += 2;
            if (!Hex4(&lo)) return false;
            if (lo < 0xdc00 || lo > 0xdfff) return Error("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return Error("unpaired surrogate");
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Error("invalid escape");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

// A parsed object's member `name`, or nullptr when it has none.
inline const Json* Member(const std::map<std::string, Json>& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() ? nullptr : &it->second;
}

inline std::string ErrorLine(const std::string& msg) {
  std::string out = "{\"error\":";
  AppendQuoted(&out, msg);
  return out + "}\n";
}

}  // namespace dsut

#endif  // DUALSWARM_TESTS_SUTS_SUT_JSON_H_
