// The checker and an intermediary's spec (one with an origin role,
// docs/spec-language.md: intermediaries). The checker does not explain
// origin-side observations yet, so it must refuse such a spec up front with
// a reason, never check a trace against half of it; and an origin-side
// line in the trace of any other spec is a malformed trace.
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
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
  for (const char* name :
       {"kv.dspec", "queue.dspec", "http_webdav.dspec", "redis.dspec", "memcached.dspec", "etcd_kv.dspec"}) {
    auto spec = Shipped(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_TRUE(check::CheckableSpec(*spec).ok()) << name;
  }
}

TEST(CheckerOrigin, AnOriginSideLineIsMalformedForASpecWithoutAnOriginRole) {
  auto trace = check::ParseTrace("t.jsonl",
                                 "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"get\",\"key\":\"k\"}}\n"
                                 "{\"side\":\"origin\",\"label\":1,\"conn\":0,\"dir\":\"received\",\"msg\":{}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto checker = check::Checker::Create(Shipped("kv.dspec"), check::CheckerOptions{});
  ASSERT_TRUE(checker.ok()) << checker.status();
  ASSERT_TRUE((*checker)->Observe((*trace)[0]).ok());
  absl::Status s = (*checker)->Observe((*trace)[1]);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(s.message(), "line 2: an observation on the origin side, but spec 'kv' has no origin role"))
      << s;
}

}  // namespace
}  // namespace dualswarm
