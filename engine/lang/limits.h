// The limits on what a spec may make the engine do. A spec is untrusted
// input (any submitter can upload one), so loading and evaluating it is
// bounded in size, time, memory and native stack; reaching a bound is a
// clear error naming it ("file:line:col: ... (limit: NAME)"), never a
// crash, a hang or a finding against a system under test. Documented in
// docs/spec-language.md ("Limits"); tests/unit/spec_limits_test.cc runs
// each on a thread with a small stack.
#ifndef DUALSWARM_ENGINE_LANG_LIMITS_H_
#define DUALSWARM_ENGINE_LANG_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace dualswarm::lang {

// Source text: bytes of one spec (the coordinator's upload limit too).
inline constexpr size_t kMaxSpecSourceBytes = 1 << 20;
// How the coordinator refuses a larger upload (RPCs and store).
inline constexpr const char* kSpecSourceTooLarge = "spec source exceeds 1 MiB";
// Parser: expression / type / pattern / block nesting, and the native
// stack it may use (less on a thread with a small stack: stack_budget.h).
inline constexpr int kMaxNesting = 1000;
inline constexpr size_t kMaxParseStackBytes = 4 << 20;
// Evaluation of one handler run, `gen` run, partition key or all `var`
// initialisers:
//   function calls in progress (a runaway recursion is named);
inline constexpr int kMaxCallDepth = 200;
//   native stack in use by the evaluation (nesting × calls; measured, so
//   it holds whatever the frame sizes of a build, e.g. with sanitizers;
//   less on a thread with a small stack: stack_budget.h);
inline constexpr size_t kMaxEvalStackBytes = 2 << 20;
//   expressions evaluated in all (time: ~1 s);
inline constexpr uint64_t kMaxEvalSteps = 10'000'000;
// Values (and symbolic terms) an evaluation produces:
//   tree size, shared parts counted each time (time of ==, printing);
inline constexpr uint64_t kMaxValueNodes = 1'000'000;
//   nesting depth (native stack of every walk over a value);
inline constexpr uint32_t kMaxValueDepth = 2000;
//   bytes of one string (memory).
inline constexpr size_t kMaxStringBytes = 16 << 20;
// Properties (docs/spec-language.md: properties): the bound N of
// `eventually within N` (events), and the obligations a property's monitor
// may hold at once (engine/monitor: memory and time per event).
inline constexpr int64_t kMaxEventuallyWithin = 1'000'000;
inline constexpr size_t kMaxMonitorObligations = 10'000;
// ... and how deep they may nest (`F until G` with eventualities on both
// sides nests one level per event): every walk over them recurses.
inline constexpr size_t kMaxMonitorDepth = 500;
// How often (in evaluation steps) the oracle is asked whether to stop
// (the checker's time bound and cancellation).
inline constexpr uint64_t kPollEverySteps = 1 << 16;

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_LIMITS_H_
