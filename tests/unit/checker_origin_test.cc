// The checker and an intermediary's spec (one with an origin role,
// docs/spec-language.md: intermediaries). The checker does not explain
// origin-side observations yet, so it must refuse such a spec up front with
// a reason, never check a trace against half of it.
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "engine/check/checker.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

constexpr const char* kRelay = R"(spec relay;
on recv q from c { send origin({c: c}) q; }
on recv r from t: origin { send t.c r; }
gen request { { op: "get" } }
)";

TEST(CheckerOrigin, ASpecWithAnOriginRoleIsRefusedWithItsReason) {
  auto spec = lang::LoadSpec("relay.dspec", kRelay);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::Status s = check::CheckableSpec(**spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(s.message(), "spec 'relay' has an origin role")) << s;
  auto checker = check::Checker::Create(*spec, check::CheckerOptions{});
  EXPECT_EQ(checker.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(CheckerOrigin, EveryShippedSpecIsCheckable) {
  for (const char* name : {"kv.dspec", "queue.dspec", "http_webdav.dspec", "redis.dspec", "memcached.dspec", "etcd_kv.dspec"}) {
    auto spec = Shipped(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_TRUE(check::CheckableSpec(*spec).ok()) << name;
  }
}

}  // namespace
}  // namespace dualswarm
