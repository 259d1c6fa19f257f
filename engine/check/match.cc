#include "engine/check/match.h"

#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::check {
namespace {

using ir::Value;
using sym::TermRef;

std::string Short(const Value& v) {
  std::string s = ir::ToJson(v);
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

bool IsAbsentMarker(const Value& v) { return v.is_option() && !v.has_value(); }

}  // namespace

bool MatchMessage(const Value& spec, const Value& obs, const std::string& path, std::vector<TermRef>* cs,
                  Mismatch* mm) {
  auto fail = [&](std::string text) {
    mm->field = path.empty() ? "(message)" : path;
    mm->text = std::move(text);
    return false;
  };
  switch (spec.kind()) {
    case Value::Kind::kOption:
      if (!spec.has_value()) {
        if (obs.is_null()) return true;
        return fail(absl::StrCat("spec expects nothing (none), observed ", Short(obs)));
      }
      return MatchMessage(spec.inner(), obs, path, cs, mm);
    case Value::Kind::kSym: {
      const TermRef& t = spec.as_term();
      auto os = obs.scalar_sort();
      if (!os || obs.is_sym() || *os != t->sort)
        return fail(absl::StrCat("spec expects a ", sym::SortName(t->sort), " (", sym::TermToString(t), "), observed ",
                                 Short(obs)));
      cs->push_back(sym::MkEq(t, obs.ToTerm()));
      return true;
    }
    case Value::Kind::kMap: {
      if (!obs.is_map()) return fail(absl::StrCat("spec expects an object, observed ", Short(obs)));
      for (const auto& [k, v] : spec.as_map()) {
        std::string sub = path.empty() ? k : absl::StrCat(path, ".", k);
        const Value* o = obs.Find(k);
        if (IsAbsentMarker(v)) {
          if (o != nullptr) {
            mm->field = sub;
            mm->text = absl::StrCat("spec expects no field '", k, "', observed ", Short(*o));
            return false;
          }
          continue;
        }
        if (o == nullptr) {
          mm->field = sub;
          mm->text = absl::StrCat("spec expects field '", k, "' = ", Short(v), ", observed no such field");
          return false;
        }
        if (!MatchMessage(v, *o, sub, cs, mm)) return false;
      }
      return true;
    }
    case Value::Kind::kList: {
      if (!obs.is_list()) return fail(absl::StrCat("spec expects a list, observed ", Short(obs)));
      const auto& a = spec.as_list();
      const auto& b = obs.as_list();
      if (a.size() != b.size())
        return fail(absl::StrCat("spec expects a list of ", a.size(), " elements, observed ", b.size()));
      for (size_t i = 0; i < a.size(); ++i)
        if (!MatchMessage(a[i], b[i], absl::StrCat(path, "[", i, "]"), cs, mm)) return false;
      return true;
    }
    default:
      if (spec == obs) return true;
      return fail(absl::StrCat("spec expects ", Short(spec), ", observed ", Short(obs)));
  }
}

}  // namespace dualswarm::check
