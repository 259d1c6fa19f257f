// `dualswarm replay`: reruns a saved counterexample against a fresh SUT and
// says whether it still fails with the same signature.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::cli {
namespace {

const char kReplayHelp[] =
    "usage: dualswarm replay CX.json (--launch CMD | --target HOST:PORT) [options]\n"
    "\n"
    "Reruns the input of a saved counterexample (from `dualswarm test --save`) with its\n"
    "recorded seed, connections and settings, and reports whether it still fails with\n"
    "the same signature. The input of a rare race's counterexample is sent as many\n"
    "times over in one run as its `repeat` says.\n"
    "\n"
    "options:\n"
    "  --launch CMD        start a fresh SUT ({port} and {dir} as in `dualswarm test`)\n"
    "  --target HOST:PORT  use a running server\n"
    "  --spec FILE         the spec (default: the file recorded in the counterexample)\n"
    "  --times N           replay N times, each on a fresh SUT (default 1)\n"
    "  --descriptor-set F  the services' descriptor set (counterexamples of the grpc adapter)\n"
    "  --run-as USER       fs: run the program as USER, as the test did (root only)\n"
    "  --json              one JSON object per replay\n"
    "\n"
    "exit: 1 when every replay failed with the same signature (still broken), 0 when\n"
    "none failed (fixed), 3 when results were mixed or failed differently, 2 bad input\n";

}  // namespace

int ReplayCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args) || args.empty()) {
    std::fputs(kReplayHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string file = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  FlagMap f;
  std::string err;
  if (!ParseFlags(rest, {"launch", "target", "spec", "times", "descriptor-set", "run-as"}, {"json"}, &f, &err))
    return BadInput(absl::StrCat(err, "\n\n", kReplayHelp));
  if (f.count("launch") == f.count("target"))
    return BadInput("replay needs exactly one of --launch CMD or --target HOST:PORT");
  auto text = lang::ReadFileToString(file);
  if (!text.ok()) return BadInput(std::string(text.status().message()));
  auto cx = harness::CounterexampleFromJson(*text);
  if (!cx.ok()) return BadInput(absl::StrCat(file, ": ", cx.status().message()));
  // An explore run's finding is a violation in the spec, found with no SUT
  // (docs/explore.md): nothing to replay against a server.
  if (cx->adapter == "explore")
    return BadInput(absl::StrCat(
        file, ": this finding is a violation in the spec itself, found by exploring it (no SUT ",
        "ran); reproduce it with `dualswarm explore --spec ", cx->spec_file, " --depth ", cx->input.size(), "`"));
  std::string spec_file = f.count("spec") ? f["spec"] : cx->spec_file;
  auto spec = lang::LoadSpecFile(spec_file);
  if (!spec.ok()) return BadInput(absl::StrCat("spec rejected:\n", spec.status().message()));
  if ((*spec)->content_hash != cx->spec_hash)
    std::fprintf(stderr, "warning: %s has changed since the counterexample was recorded (hash %s, now %s)\n",
                 spec_file.c_str(), cx->spec_hash.c_str(), (*spec)->content_hash.c_str());
  int times = 1;
  if (f.count("times") && (!absl::SimpleAtoi(f["times"], &times) || times < 1 || times > 10000))
    return BadInput("--times must be between 1 and 10000");
  bool json = f.count("json") > 0;
  int same = 0, other = 0, passed = 0;
  for (int i = 0; i < times; ++i) {
    workers::JobOptions o = workers::ReplayOptions(*cx, cx->input);
    o.launch = f.count("launch") ? f["launch"] : "";
    o.target = f.count("target") ? f["target"] : "";
    if (std::optional<int> bad = AdapterConfigFromFlags(f, &o)) return *bad;
    auto r = workers::RunJob(*spec, o);
    if (!r.ok()) return BadInput(std::string(r.status().message()));
    std::string sig;
    if (r->outcome != workers::Outcome::kPassed) sig = harness::ComputeSignature(workers::VerdictOf(*r), r->trace);
    const char* what = r->outcome == workers::Outcome::kPassed ? "passed"
                       : sig == cx->signature                  ? "reproduced"
                                                               : "failed differently";
    (r->outcome == workers::Outcome::kPassed ? passed : sig == cx->signature ? same : other)++;
    if (json) {
      std::printf("{\"replay\":%d,\"result\":\"%s\",\"kind\":\"%s\",\"signature\":\"%s\",\"expected\":\"%s\"}\n", i + 1,
                  what, workers::OutcomeName(r->outcome), sig.c_str(), cx->signature.c_str());
    } else {
      std::printf("replay %d/%d: %s (%s%s)\n", i + 1, times, what, workers::OutcomeName(r->outcome),
                  sig.empty() ? "" : absl::StrCat(", signature ", sig).c_str());
      if (r->outcome != workers::Outcome::kPassed && sig != cx->signature) std::printf("  %s\n", r->reason.c_str());
    }
  }
  if (!json)
    std::printf("%d of %d replays reproduced signature %s, %d failed differently, %d passed\n", same, times,
                cx->signature.c_str(), other, passed);
  if (same == times) return kExitRejected;
  if (passed == times) return kExitOk;
  return 3;
}

}  // namespace dualswarm::cli
