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

// `step` (a field name or "[i]") followed by the path below it.
std::string JoinPath(std::string step, const std::string& below) {
  if (below.empty()) return step;
  if (below.front() == '[') return step + below;
  return absl::StrCat(step, ".", below);
}

// MatchMessage below the top: on a mismatch, mm (when given) names the
// field relative to `spec` ("" for `spec` itself). The texts are built only
// when asked for: a search matches far more often than it reports.
bool Match(const Value& spec, const Value& obs, std::vector<TermRef>* cs, Mismatch* mm) {
  auto fail = [&](auto make_text) {
    if (mm != nullptr) {
      mm->field.clear();
      mm->text = make_text();
    }
    return false;
  };
  switch (spec.kind()) {
    case Value::Kind::kOption:
      if (!spec.has_value()) {
        if (obs.is_null()) return true;
        return fail([&] { return absl::StrCat("spec expects nothing (none), observed ", Short(obs)); });
      }
      return Match(spec.inner(), obs, cs, mm);
    case Value::Kind::kSym: {
      const TermRef& t = spec.as_term();
      auto os = obs.scalar_sort();
      if (!os || obs.is_sym() || *os != t->sort)
        return fail([&] {
          return absl::StrCat("spec expects a ", sym::SortName(t->sort), " (", sym::TermToString(t), "), observed ",
                              Short(obs));
        });
      cs->push_back(sym::MkEq(t, obs.ToTerm()));
      return true;
    }
    case Value::Kind::kMap: {
      if (!obs.is_map()) return fail([&] { return absl::StrCat("spec expects an object, observed ", Short(obs)); });
      for (const auto& field : spec.as_map()) {
        const std::string& k = field.first;  // named: lambdas below cannot capture a structured binding (clang)
        const Value& v = field.second;
        const Value* o = obs.Find(k);
        bool ok = true;
        if (IsAbsentMarker(v)) {
          if (o != nullptr)
            ok = fail([&] { return absl::StrCat("spec expects no field '", k, "', observed ", Short(*o)); });
        } else if (o == nullptr) {
          ok = fail(
              [&] { return absl::StrCat("spec expects field '", k, "' = ", Short(v), ", observed no such field"); });
        } else {
          ok = Match(v, *o, cs, mm);
        }
        if (!ok) {
          if (mm != nullptr) mm->field = JoinPath(k, mm->field);
          return false;
        }
      }
      return true;
    }
    case Value::Kind::kList: {
      if (!obs.is_list()) return fail([&] { return absl::StrCat("spec expects a list, observed ", Short(obs)); });
      const auto& a = spec.as_list();
      const auto& b = obs.as_list();
      if (a.size() != b.size())
        return fail(
            [&] { return absl::StrCat("spec expects a list of ", a.size(), " elements, observed ", b.size()); });
      for (size_t i = 0; i < a.size(); ++i) {
        if (Match(a[i], b[i], cs, mm)) continue;
        if (mm != nullptr) mm->field = JoinPath(absl::StrCat("[", i, "]"), mm->field);
        return false;
      }
      return true;
    }
    default:
      if (spec == obs) return true;
      return fail([&] { return absl::StrCat("spec expects ", Short(spec), ", observed ", Short(obs)); });
  }
}

}  // namespace

bool MatchMessage(const Value& spec, const Value& obs, std::vector<TermRef>* cs, Mismatch* mm) {
  if (Match(spec, obs, cs, mm)) return true;
  if (mm != nullptr && mm->field.empty()) mm->field = "(message)";
  return false;
}

int CountMismatches(const Value& spec, const Value& obs) {
  switch (spec.kind()) {
    case Value::Kind::kOption:
      if (!spec.has_value()) return obs.is_null() ? 0 : 1;
      return CountMismatches(spec.inner(), obs);
    case Value::Kind::kSym: {
      auto os = obs.scalar_sort();
      return (!os || obs.is_sym() || *os != spec.as_term()->sort) ? 1 : 0;
    }
    case Value::Kind::kMap: {
      if (!obs.is_map()) return 1;
      int n = 0;
      for (const auto& [k, v] : spec.as_map()) {
        const Value* o = obs.Find(k);
        if (IsAbsentMarker(v))
          n += o != nullptr;
        else
          n += o == nullptr ? 1 : CountMismatches(v, *o);
      }
      return n;
    }
    case Value::Kind::kList: {
      if (!obs.is_list() || spec.as_list().size() != obs.as_list().size()) return 1;
      int n = 0;
      for (size_t i = 0; i < spec.as_list().size(); ++i) n += CountMismatches(spec.as_list()[i], obs.as_list()[i]);
      return n;
    }
    default:
      return spec == obs ? 0 : 1;
  }
}

}  // namespace dualswarm::check
