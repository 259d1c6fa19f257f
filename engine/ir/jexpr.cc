#include "engine/ir/jexpr.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dualswarm::ir {
namespace {

// A field name in the "@field" form may hold any bytes (message keys and
// header names are the SUT's): '%', '@', '#' and '.' are written as %XX so
// that the path still splits into the same steps and a reference's
// LABEL.JPATH.FN still splits at its two dots. An empty name is just "@".
std::string EscapeField(absl::string_view f) {
  std::string out;
  for (char c : f) {
    if (c == '%' || c == '@' || c == '#' || c == '.') {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Inverse of EscapeField; a '%' not followed by two hex digits stays as is.
std::string UnescapeField(absl::string_view f) {
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '%' && i + 2 < f.size() && HexDigit(f[i + 1]) >= 0 && HexDigit(f[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexDigit(f[i + 1]) * 16 + HexDigit(f[i + 2])));
      i += 2;
    } else {
      out.push_back(f[i]);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<JPath> ParseJPath(absl::string_view text) {
  JPath out;
  if (text == "this" || text.empty()) return out;
  if (text[0] != '@' && text[0] != '#') {
    // Dotted form: "headers.etag" or "items.0".
    for (absl::string_view part : absl::StrSplit(text, '.')) {
      if (part.empty()) return absl::InvalidArgumentError(absl::StrCat("empty step in path \"", text, "\""));
      JStep s;
      s.field = std::string(part);
      out.push_back(std::move(s));
    }
    return out;
  }
  size_t i = 0;
  while (i < text.size()) {
    char kind = text[i];
    if (kind != '@' && kind != '#')
      return absl::InvalidArgumentError(absl::StrCat("path \"", text, "\": expected '@' or '#' at ", i));
    size_t j = i + 1;
    while (j < text.size() && text[j] != '@' && text[j] != '#') ++j;
    absl::string_view name = text.substr(i + 1, j - i - 1);
    JStep s;
    if (kind == '#') {
      s.is_index = true;
      if (!absl::SimpleAtoi(name, &s.index) || s.index < 0)
        return absl::InvalidArgumentError(absl::StrCat("path \"", text, "\": bad index \"", name, "\""));
    } else {
      s.field = UnescapeField(name);
    }
    out.push_back(std::move(s));
    i = j;
  }
  return out;
}

std::string JPathToString(const JPath& p) {
  if (p.empty()) return "this";
  std::string out;
  for (const auto& s : p)
    absl::StrAppend(&out, s.is_index ? "#" : "@", s.is_index ? absl::StrCat(s.index) : EscapeField(s.field));
  return out;
}

const Value* FollowJPath(const Value& v, const JPath& p) {
  const Value* cur = &v;
  for (const auto& s : p) {
    if (s.is_index) {
      if (!cur->is_list() || s.index >= static_cast<int64_t>(cur->as_list().size())) {
        // A dotted path may name list indices as fields.
        return nullptr;
      }
      cur = &cur->as_list()[static_cast<size_t>(s.index)];
    } else if (cur->is_map()) {
      cur = cur->Find(s.field);
      if (cur == nullptr) return nullptr;
    } else if (cur->is_list()) {
      int64_t idx;
      if (!absl::SimpleAtoi(s.field, &idx) || idx < 0 || idx >= static_cast<int64_t>(cur->as_list().size()))
        return nullptr;
      cur = &cur->as_list()[static_cast<size_t>(idx)];
    } else {
      return nullptr;
    }
  }
  return cur;
}

void ForEachStringLeaf(const Value& v, JPath* path,
                       const std::function<void(const std::string&, const JPath&)>& visit) {
  if (v.is_string()) {
    visit(v.as_string(), *path);
  } else if (v.is_map()) {
    for (const auto& [k, x] : v.as_map()) {
      path->push_back({false, k, 0});
      ForEachStringLeaf(x, path, visit);
      path->pop_back();
    }
  } else if (v.is_list()) {
    for (size_t i = 0; i < v.as_list().size(); ++i) {
      path->push_back({true, "", static_cast<int64_t>(i)});
      ForEachStringLeaf(v.as_list()[i], path, visit);
      path->pop_back();
    }
  }
}

absl::StatusOr<JRef> ParseJRef(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 3)
    return absl::InvalidArgumentError(absl::StrCat("reference \"", text, "\" is not LABEL.JPATH.FN"));
  JRef r;
  if (!absl::SimpleAtoi(parts[0], &r.label) || r.label <= 0)
    return absl::InvalidArgumentError(absl::StrCat("reference \"", text, "\": bad label"));
  auto path = ParseJPath(parts[1]);
  if (!path.ok()) return path.status();
  r.path = std::move(*path);
  r.fn = std::string(parts[2]);
  auto probe = ApplyJFn(r.fn, Value::String(""));
  if (!probe.ok() && absl::IsNotFound(probe.status())) return probe.status();
  return r;
}

std::string JRefToString(const JRef& r) { return absl::StrCat(r.label, ".", JPathToString(r.path), ".", r.fn); }

Value MakeHole(const JRef& ref, const Value* fallback) {
  MapEntries e = {{"$ref", Value::String(JRefToString(ref))}};
  if (fallback) e.emplace_back("$else", *fallback);
  return Value::Map(std::move(e));
}

bool IsHole(const Value& v) {
  if (!v.is_map()) return false;
  const Value* r = v.Find("$ref");
  return r != nullptr && r->is_string();
}

bool IsQuoted(const Value& v) { return v.is_map() && v.as_map().size() == 1 && v.Find("$quote") != nullptr; }

Value Quote(const Value& v) { return Value::Map({{"$quote", v}}); }

Value QuoteLookalikes(const Value& v, const std::vector<Value>& holes) {
  if (v.is_map()) {
    if (v.Find("$ref") != nullptr || v.Find("$quote") != nullptr) {
      bool real = IsHole(v) && std::find(holes.begin(), holes.end(), v) != holes.end();
      return real ? v : Quote(v);
    }
    MapEntries e;
    e.reserve(v.as_map().size());
    for (const auto& [k, x] : v.as_map()) e.emplace_back(k, QuoteLookalikes(x, holes));
    return Value::Map(std::move(e));
  }
  if (v.is_list()) {
    std::vector<Value> items;
    items.reserve(v.as_list().size());
    for (const auto& x : v.as_list()) items.push_back(QuoteLookalikes(x, holes));
    return Value::List(std::move(items));
  }
  return v;
}

bool HasHoles(const Value& v) {
  if (IsQuoted(v)) return false;
  if (IsHole(v)) return true;
  if (v.is_map()) {
    for (const auto& [k, x] : v.as_map())
      if (HasHoles(x)) return true;
  } else if (v.is_list()) {
    for (const auto& x : v.as_list())
      if (HasHoles(x)) return true;
  }
  return false;
}

absl::StatusOr<Value> ApplyJFn(absl::string_view fn, const Value& v) {
  if (fn == "id") return v;
  if (fn == "weaken" || fn == "strip_weak") {
    if (!v.is_string()) return absl::InvalidArgumentError(absl::StrCat(fn, " needs a string"));
    const std::string& s = v.as_string();
    bool weak = s.rfind("W/", 0) == 0;
    if (fn == "weaken") return weak ? v : Value::String("W/" + s);
    return weak ? Value::String(s.substr(2)) : v;
  }
  if (fn == "succ") {
    if (!v.is_int()) return absl::InvalidArgumentError("succ needs an int");
    if (v.as_int() == INT64_MAX)
      return absl::InvalidArgumentError(absl::StrCat("succ of ", v.as_int(), " overflows 64 bits"));
    return Value::Int(v.as_int() + 1);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown J-expression function \"", fn, "\" (known: id, weaken, strip_weak, succ)"));
}

namespace {

absl::StatusOr<Value> Resolve(const Value& hole, const std::vector<LabeledMessage>& trace) {
  auto ref = ParseJRef(hole.Find("$ref")->as_string());
  if (!ref.ok()) return ref.status();
  const Value* found = nullptr;
  for (const auto& m : trace) {
    if (m.label != ref->label) continue;
    found = FollowJPath(m.msg, ref->path);
    break;
  }
  // Loose: the most recent message that has the path.
  for (auto it = trace.rbegin(); found == nullptr && it != trace.rend(); ++it) found = FollowJPath(it->msg, ref->path);
  if (found == nullptr) {
    const Value* fb = hole.Find("$else");
    if (fb != nullptr) return *fb;
    return absl::NotFoundError(absl::StrCat("no message in the trace has ", JPathToString(ref->path), " (reference ",
                                            JRefToString(*ref), ")"));
  }
  return ApplyJFn(ref->fn, *found);
}

}  // namespace

absl::StatusOr<Value> Instantiate(const Value& jexpr, const std::vector<LabeledMessage>& trace) {
  if (IsQuoted(jexpr)) return *jexpr.Find("$quote");
  if (IsHole(jexpr)) return Resolve(jexpr, trace);
  if (jexpr.is_map()) {
    MapEntries e;
    e.reserve(jexpr.as_map().size());
    for (const auto& [k, x] : jexpr.as_map()) {
      auto v = Instantiate(x, trace);
      if (!v.ok()) return v.status();
      e.emplace_back(k, std::move(*v));
    }
    return Value::Map(std::move(e));
  }
  if (jexpr.is_list()) {
    std::vector<Value> items;
    for (const auto& x : jexpr.as_list()) {
      auto v = Instantiate(x, trace);
      if (!v.ok()) return v.status();
      items.push_back(std::move(*v));
    }
    return Value::List(std::move(items));
  }
  return jexpr;
}

}  // namespace dualswarm::ir
