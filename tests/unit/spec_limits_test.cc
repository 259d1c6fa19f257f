// Every limit of engine/lang/limits.h, reached by the hostile specs a
// security review found (exponential time and memory at load, a runaway
// handler, deep native recursion, NUL bytes, oversized sources): each ends
// in a clear error naming the limit, within seconds, on a thread with a
// 1 MiB stack (smaller than any thread the engine runs on).
#include <pthread.h>

#include <chrono>
#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/lang/interp.h"
#include "engine/lang/limits.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"

namespace dualswarm::lang {
namespace {

using ir::Value;

constexpr size_t kSmallStack = 1 << 20;

// Runs fn on a new thread with a stack of `bytes` and waits for it.
void RunOnStack(size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t t;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, trampoline, const_cast<std::function<void()>*>(&fn)), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}

// The error LoadSpec gives `source` on a small stack, and how long it took.
std::string LoadErrorOnSmallStack(const std::string& source, double* seconds = nullptr) {
  std::string error = "(loaded)";
  RunOnStack(kSmallStack, [&] {
    auto start = std::chrono::steady_clock::now();
    auto spec = LoadSpec("t.dspec", source);
    if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!spec.ok()) error = std::string(spec.status().message());
  });
  return error;
}

// An oracle that never branches and stops the evaluation at its first poll.
class StoppingOracle : public Oracle {
 public:
  int Choose(int, Loc) override { return 0; }
  Value Fresh(sym::Sort, Loc) override { return Value::Null(); }
  bool Decide(const sym::TermRef&, Loc) override { return false; }
  bool Assume(const sym::TermRef&, Loc) override { return true; }
  bool Possible(const sym::TermRef&) override { return false; }
  absl::Status Poll() override {
    ++polls;
    return stop ? absl::DeadlineExceededError("time bound of the test") : absl::OkStatus();
  }
  bool stop = true;
  int polls = 0;
};

// The error of one handler run of `source` on a small stack ("(ok)" when
// none), and how long it took.
std::string HandlerErrorOnSmallStack(const std::string& source, double* seconds = nullptr,
                                     size_t stack_bytes = kSmallStack) {
  auto spec = LoadSpec("t.dspec", source);
  if (!spec.ok()) return absl::StrCat("(load) ", spec.status().message());
  std::string error = "(ok)";
  RunOnStack(stack_bytes, [&] {
    Interpreter interp(spec->get());
    StoppingOracle oracle;
    oracle.stop = false;
    StepOutput out;
    auto start = std::chrono::steady_clock::now();
    absl::Status s = interp.RunHandler((*spec)->initial_globals, Value::Map({}), Value::Int(0), &oracle, &out);
    if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) error = std::string(s.message());
  });
  return error;
}

const char kHandler[] = "on recv q from c {\n  send c { ok: true };\n}\n";

// var l0 = [1]; var l1 = [l0, l0]; ... 1.4 KB describing a 2^60-node tree.
TEST(SpecLimits, SharedListsThatDescribeAHugeTreeStopAtValueNodes) {
  std::string src = "spec t;\nvar l0 = [1];\n";
  for (int i = 1; i <= 60; ++i) absl::StrAppend(&src, "var l", i, " = [l", i - 1, ", l", i - 1, "];\n");
  absl::StrAppend(&src, "var same = l60 == l60;\n", kHandler);
  double seconds = 0;
  std::string error = LoadErrorOnSmallStack(src, &seconds);
  EXPECT_TRUE(absl::StrContains(error, "limit: value nodes")) << error;
  EXPECT_TRUE(absl::StartsWith(error, "t.dspec:")) << error;
  EXPECT_LT(seconds, 2.0);
}

// Many typed copies of one large value: each type check walks it, so the
// walks share one budget (quadratic time, not exponential, but hours).
TEST(SpecLimits, TypeChecksOfInitialValuesShareOneBudget) {
  // l17: lists nested 18 deep, 2^18 ints (~524k nodes, under the value
  // limit); its type written out in full.
  std::string src = "spec t;\nvar l0 = [1, 1];\n";
  std::string type = "int";
  for (int i = 1; i <= 17; ++i) absl::StrAppend(&src, "var l", i, " = [l", i - 1, ", l", i - 1, "];\n");
  for (int i = 0; i <= 17; ++i) type = absl::StrCat("list<", type, ">");
  for (int i = 0; i < 40; ++i) absl::StrAppend(&src, "var c", i, ": ", type, " = l17;\n");
  absl::StrAppend(&src, kHandler);
  double seconds = 0;
  std::string error = LoadErrorOnSmallStack(src, &seconds);
  EXPECT_TRUE(absl::StrContains(error, "limit: evaluation steps")) << error;
  EXPECT_LT(seconds, 5.0);
}

// var a1 = a0 + a0 ... ×30 on strings: 674 bytes asking for > 16 GiB.
TEST(SpecLimits, DoublingStringsStopAtStringBytes) {
  std::string src = "spec t;\nvar a0 = \"aaaaaaaaaaaaaaaaaaaaaa\";\n";
  for (int i = 1; i <= 30; ++i) absl::StrAppend(&src, "var a", i, " = a", i - 1, " + a", i - 1, ";\n");
  absl::StrAppend(&src, kHandler);
  double seconds = 0;
  std::string error = LoadErrorOnSmallStack(src, &seconds);
  EXPECT_TRUE(absl::StrContains(error, "limit: string bytes")) << error;
  EXPECT_LT(seconds, 2.0);
}

// f(n) = f(n-1) + f(n-1); f(60): 2^60 calls.
TEST(SpecLimits, ExponentialRecursionStopsAtEvaluationSteps) {
  std::string src =
      "spec t;\nfn f(n) {\n  if n == 0 { 1 } else { f(n - 1) + f(n - 1) }\n}\n"
      "on recv q from c {\n  send c { v: f(60) };\n}\n";
  double seconds = 0;
  std::string error = HandlerErrorOnSmallStack(src, &seconds);
  EXPECT_TRUE(absl::StrContains(error, "limit: evaluation steps")) << error;
  EXPECT_LT(seconds, 10.0);
}

// 100 nested unary `-` around a recursive call, 199 calls deep: 20,000
// expressions in progress at once (this crashed `check` with SIGSEGV).
TEST(SpecLimits, DeepNativeRecursionStopsAtEvaluationStack) {
  std::string minuses;
  for (int i = 0; i < 100; ++i) minuses += "- ";
  std::string src = absl::StrCat("spec t;\nfn f(n) {\n  if n == 0 { 0 } else { ", minuses,
                                 " f(n - 1) }\n}\non recv q from c {\n  send c { v: f(199) };\n}\n");
  std::string error = HandlerErrorOnSmallStack(src);
  EXPECT_TRUE(absl::StrContains(error, "limit: evaluation stack")) << error;
  // Deep recursion that stays under the limit evaluates: 60 calls on the
  // small stack, the most the call depth allows on an ordinary (8 MiB) one.
  auto recursion = [](int n) {
    return absl::StrCat("spec t;\nfn f(n) {\n  if n == 0 { 0 } else { 1 + f(n - 1) }\n}\n",
                        "on recv q from c {\n  send c { v: f(", n, ") };\n}\n");
  };
  EXPECT_EQ(HandlerErrorOnSmallStack(recursion(60)), "(ok)");
  EXPECT_EQ(HandlerErrorOnSmallStack(recursion(kMaxCallDepth - 1), nullptr, 8 << 20), "(ok)");
}

// The worst nesting the parser accepts loads on an ordinary thread, and on
// the small stack either loads or fails naming a limit (never a crash).
TEST(SpecLimits, MaximalParserNestingFitsTheStack) {
  std::string deep;
  for (int i = 0; i < kMaxNesting - 5; ++i) deep += "[";
  deep += "1";
  for (int i = 0; i < kMaxNesting - 5; ++i) deep += "]";
  std::string src = absl::StrCat("spec t;\nvar x = ", deep, ";\nvar y = x == x;\nvar s = str(len(x));\n", kHandler);
  std::string small = LoadErrorOnSmallStack(src);
  EXPECT_TRUE(small == "(loaded)" || absl::StrContains(small, "(limit: ")) << small;
  std::string error = "(loaded)";
  RunOnStack(8 << 20, [&] {
    auto spec = LoadSpec("t.dspec", src);
    if (!spec.ok()) error = std::string(spec.status().message());
  });
  EXPECT_EQ(error, "(loaded)");
}

TEST(SpecLimits, NulBytesAreRefusedWithTheirPosition) {
  std::string src = absl::StrCat("spec t;\nvar x = \"a", std::string(1, '\0'), "b\";\n", kHandler);
  std::string error = LoadErrorOnSmallStack(src);
  EXPECT_EQ(error, "t.dspec:2:11: NUL byte in the spec source (a spec is text)");
}

TEST(SpecLimits, OversizedSourcesAreRefused) {
  std::string src = absl::StrCat("spec t;\n", kHandler, "// ", std::string(kMaxSpecSourceBytes, 'x'), "\n");
  std::string error = LoadErrorOnSmallStack(src);
  EXPECT_TRUE(absl::StrContains(error, "limit: source bytes")) << error;
}

// A handler that runs long is stopped from outside at the oracle's next
// poll (the checker's time bound), not after its whole computation.
TEST(SpecLimits, LongHandlersStopAtTheOraclesPoll) {
  auto spec = LoadSpec("t.dspec", R"(spec t;
fn f(n) {
  if n == 0 { 1 } else { f(n - 1) + f(n - 1) }
}
on recv q from c {
  send c { v: f(18) };
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  Interpreter interp(spec->get());
  StoppingOracle oracle;
  StepOutput out;
  absl::Status s = interp.RunHandler((*spec)->initial_globals, Value::Map({}), Value::Int(0), &oracle, &out);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(oracle.polls, 1);
  // Not stopped, it finishes (f(18): ~2.6M steps, several polls).
  oracle.stop = false;
  s = interp.RunHandler((*spec)->initial_globals, Value::Map({}), Value::Int(0), &oracle, &out);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(oracle.polls, 10);
}

// Work charged in large amounts (copying a 1 MiB string costs 65,536
// steps at once) still reaches the oracle's poll every kPollEverySteps:
// the poll used to wait for a step count that was a multiple, which such
// jumps skip.
TEST(SpecLimits, ChargedWorkIsPolledToo) {
  auto spec = LoadSpec("t.dspec", R"(spec t;
fn dbl(s, n) {
  if n == 0 { s } else { dbl(s + s, n - 1) }
}
fn grow(s, n) {
  if n == 0 { 1 } else { grow(s + "x", n - 1) }
}
on recv q from c {
  send c { v: grow(dbl("x", 20), 60) };
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  Interpreter interp(spec->get());
  StoppingOracle oracle;
  oracle.stop = false;
  StepOutput out;
  absl::Status s = interp.RunHandler((*spec)->initial_globals, Value::Map({}), Value::Int(0), &oracle, &out);
  ASSERT_TRUE(s.ok()) << s;
  // ~60 copies of 1 MiB = ~3.9M steps: one poll per 65,536.
  EXPECT_GE(oracle.polls, 55);
  oracle.stop = true;
  oracle.polls = 0;
  s = interp.RunHandler((*spec)->initial_globals, Value::Map({}), Value::Int(0), &oracle, &out);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(oracle.polls, 1);
}

// State that nests one level deeper per request stops at the value depth
// limit, with every walk over the deepest value (==, printing) fitting the
// small stack.
TEST(SpecLimits, StateNestedPerRequestStopsAtValueDepth) {
  auto spec = LoadSpec("t.dspec", R"(spec t;
var s = [];
on recv q from c {
  s = [s];
  send c { ok: s == s };
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  RunOnStack(kSmallStack, [&] {
    Interpreter interp(spec->get());
    StoppingOracle oracle;
    oracle.stop = false;
    std::vector<Value> globals = (*spec)->initial_globals;
    absl::Status s;
    int runs = 0;
    while (s.ok() && runs < 5000) {
      StepOutput out;
      s = interp.RunHandler(globals, Value::Map({}), Value::Int(0), &oracle, &out);
      if (s.ok()) globals = out.globals;
      ++runs;
    }
    EXPECT_TRUE(absl::StrContains(s.message(), "limit: value depth")) << s;
    EXPECT_EQ(runs, static_cast<int>(kMaxValueDepth));
    EXPECT_GT(globals[0].ToString().size(), 2 * (kMaxValueDepth - 1));
  });
}

}  // namespace
}  // namespace dualswarm::lang
