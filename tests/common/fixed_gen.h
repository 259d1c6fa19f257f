// A GenContext for tests with no randomness to speak of: the first enabled
// alternative, the lowest number, words of 'a', nothing observed; it keeps
// the branches each generated request took (lang::GenContext::TookBranches).
#ifndef DUALSWARM_TESTS_COMMON_FIXED_GEN_H_
#define DUALSWARM_TESTS_COMMON_FIXED_GEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/value.h"
#include "engine/lang/interp.h"

namespace dualswarm::testing {

class FixedGen : public lang::GenContext {
 public:
  int ChooseAlternative(int, const std::vector<int64_t>&, const std::vector<bool>& excluded) override {
    for (size_t i = 0; i < excluded.size(); ++i)
      if (!excluded[i]) return static_cast<int>(i);
    return -1;
  }
  int64_t RandomInt(int64_t lo, int64_t) override { return lo; }
  std::string RandomWord(int64_t n) override { return std::string(static_cast<size_t>(n), 'a'); }
  std::string RandomEtag() override { return "\"e\""; }
  std::optional<ir::Value> Observed(const std::string&) override { return std::nullopt; }
  void TookBranches(const std::vector<int32_t>& ids) override { took.insert(took.end(), ids.begin(), ids.end()); }

  std::vector<int32_t> took;  // every generated request's branches, in order
};

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_FIXED_GEN_H_
