#include "engine/harness/random_server.h"

#include "absl/strings/str_cat.h"

namespace dualswarm::harness {

using ir::Value;

int RandomOracle::Choose(int n, lang::Loc) {
  return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(*rng_));
}

Value RandomOracle::Fresh(sym::Sort sort, lang::Loc) {
  switch (sort) {
    case sym::Sort::kBool:
      return Value::Bool(Choose(2, {}) == 0);
    case sym::Sort::kInt:
      return Value::Int(Choose(fresh_int_bound_, {}));
    case sym::Sort::kString:
      return Value::String(
          (*fresh_strings_)[static_cast<size_t>(Choose(static_cast<int>(fresh_strings_->size()), {}))]);
  }
  return Value::Null();
}

Value Concretize(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kOption:
      return v.has_value() ? Concretize(v.inner()) : Value::Null();
    case Value::Kind::kMap: {
      ir::MapEntries e;
      for (const auto& [k, x] : v.as_map())
        if (!(x.is_option() && !x.has_value())) e.emplace_back(k, Concretize(x));
      return Value::Map(std::move(e));
    }
    case Value::Kind::kList: {
      std::vector<Value> items;
      for (const auto& x : v.as_list()) items.push_back(Concretize(x));
      return Value::List(std::move(items));
    }
    default:
      return v;
  }
}

absl::StatusOr<lang::StepOutput> RunServerStep(const std::function<absl::Status(lang::StepOutput*)>& run,
                                               const std::string& what) {
  lang::StepOutput out;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    absl::Status s = run(&out);
    if (!s.ok()) return s;
    if (!out.killed) return out;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("the spec's `assume` killed 1000 random paths in a row for ", what,
                   "; the simulator needs specs whose server usually has a next step"));
}

}  // namespace dualswarm::harness
