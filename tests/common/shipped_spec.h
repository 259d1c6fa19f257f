// Loads a spec shipped in specs/ for a test (DUALSWARM_SOURCE_DIR is
// compiled in by tests/CMakeLists.txt); a spec that does not load fails the
// test and yields nullptr.
#ifndef DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_
#define DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"

namespace dualswarm {

inline std::shared_ptr<const lang::Spec> Shipped(const std::string& name) {
  auto spec = lang::LoadSpecFile(absl::StrCat(DUALSWARM_SOURCE_DIR, "/specs/", name));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

}  // namespace dualswarm

#endif  // DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_
