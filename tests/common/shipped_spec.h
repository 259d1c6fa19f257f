// A spec shipped in specs/ for a test, loaded or as source text (for a test
// that changes it). DUALSWARM_SOURCE_DIR is compiled in by
// tests/CMakeLists.txt; a spec that cannot be read or loaded fails the test.
#ifndef DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_
#define DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"

namespace dualswarm {

// The source of specs/NAME ("" when it cannot be read).
inline std::string ShippedSource(const std::string& name) {
  std::ifstream in(absl::StrCat(DUALSWARM_SOURCE_DIR, "/specs/", name));
  EXPECT_TRUE(in.good()) << "cannot read specs/" << name;
  std::stringstream source;
  source << in.rdbuf();
  return source.str();
}

// specs/NAME, loaded (nullptr when it does not load).
inline std::shared_ptr<const lang::Spec> Shipped(const std::string& name) {
  auto spec = lang::LoadSpecFile(absl::StrCat(DUALSWARM_SOURCE_DIR, "/specs/", name));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

}  // namespace dualswarm

#endif  // DUALSWARM_TESTS_COMMON_SHIPPED_SPEC_H_
