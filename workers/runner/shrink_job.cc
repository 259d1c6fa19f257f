#include "workers/runner/shrink_job.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "engine/harness/shrinker.h"

namespace dualswarm::workers {

harness::Verdict VerdictOf(const JobResult& r) {
  harness::Verdict v;
  v.kind = OutcomeName(r.outcome);
  v.reason = r.reason;
  if (r.outcome == Outcome::kLiveness) v.label = r.overdue_label;
  if (r.outcome == Outcome::kSafety && r.verdict.kind == check::Verdict::Kind::kReject) {
    v.label = r.verdict.observation.label;
    // The primary explanation: one whose status the SUT contradicted (the
    // expectation a reader names the bug by: "404 expected"), else the
    // smallest (location, field) — stable whichever explanation the search
    // happened to try first.
    const check::DeathReason* best = nullptr;
    auto rank = [](const check::DeathReason& d) { return std::make_tuple(d.field != "status", d.spec_loc, d.field); };
    for (const auto& d : r.verdict.reasons) {
      v.details.push_back(d.text);
      if (d.spec_loc.empty()) continue;
      v.spec_locs.push_back(d.spec_loc);
      if (!best || rank(d) < rank(*best)) best = &d;
    }
    if (best) {
      v.field = best->field;
      v.spec_loc = best->spec_loc;
    }
  }
  return v;
}

JobOptions ReplayOptions(const harness::Counterexample& cx, const std::vector<harness::InputItem>& input) {
  JobOptions o;
  o.adapter = cx.adapter;
  o.exec.seed = cx.seed;
  o.exec.connections = cx.connections;
  o.exec.max_in_flight = cx.max_in_flight;
  if (auto bo = check::ParseBranchOrder(cx.branch_order); bo.ok()) o.exec.checker.branch_order = *bo;
  if (auto m = harness::FeatureMask::Parse(cx.feature_mask); m.ok()) o.exec.mask = *m;
  o.response_timeout_ms = cx.response_timeout_ms;
  o.exec.replay = input;
  return o;
}

// Replay options for a rerun of `job`'s finding: the counterexample's
// swarm dimensions, the job's SUT launch.
JobOptions RerunOptions(const harness::Counterexample& cx, const std::vector<harness::InputItem>& input,
                        const JobOptions& job) {
  JobOptions o = ReplayOptions(cx, input);
  o.launch = job.launch;
  o.ready_timeout_ms = job.ready_timeout_ms;
  o.ready_probe = job.ready_probe;
  o.work_root = job.work_root;
  o.cancel = job.cancel;
  return o;
}

absl::StatusOr<harness::Counterexample> MakeCounterexample(std::shared_ptr<const lang::Spec> spec,
                                                           const JobOptions& job, const JobResult& result,
                                                           const ShrinkJobOptions& options) {
  harness::Counterexample cx;
  cx.spec_name = spec->name;
  cx.spec_hash = spec->content_hash;
  cx.spec_file = spec->file;
  cx.target = job.launch.empty() ? job.target : job.launch;
  cx.adapter = job.adapter;
  cx.seed = job.exec.seed;
  cx.branch_order = check::BranchOrderName(job.exec.checker.branch_order);
  cx.feature_mask = job.exec.mask.ToString();
  cx.connections = job.exec.connections;
  cx.max_in_flight = job.exec.max_in_flight;
  cx.response_timeout_ms = job.response_timeout_ms;
  cx.verdict = VerdictOf(result);
  cx.signature = harness::ComputeSignature(cx.verdict, result.trace);
  cx.input = result.inputs;
  cx.trace = result.trace;
  cx.original_size = result.inputs.size();
  cx.shrunk_size = result.inputs.size();
  cx.shrink_complete = false;
  bool shrinkable = result.outcome == Outcome::kSafety || result.outcome == Outcome::kLiveness ||
                    result.outcome == Outcome::kSutCrash;
  if (!options.shrink || job.launch.empty() || !shrinkable) return cx;

  std::string failure_class = harness::FailureClass(cx.verdict, result.trace);
  auto rerun = [&](const std::vector<harness::InputItem>& input) -> absl::StatusOr<harness::RerunOutcome> {
    auto r = RunJob(spec, RerunOptions(cx, input, job));
    if (!r.ok()) return r.status();
    harness::RerunOutcome out;
    out.verdict = VerdictOf(*r);
    out.sent = r->inputs;
    out.trace = r->trace;
    out.reproduced = r->outcome != Outcome::kPassed &&
                     harness::FailureClass(out.verdict, r->trace) == failure_class;
    return out;
  };
  harness::ShrinkOptions so;
  so.max_reruns = options.max_reruns;
  so.max_seconds = options.max_seconds;
  so.attempts = options.attempts;
  so.confirm = options.confirm;
  auto start = std::chrono::steady_clock::now();
  so.elapsed = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  so.on_progress = options.on_progress;
  int reruns = 0;

  // Shrinks `from` (whose run produced `outcome`) and verifies the result.
  auto shrink_and_verify = [&](const std::vector<harness::InputItem>& from, const harness::RerunOutcome& outcome,
                               harness::Counterexample* out) -> absl::Status {
    harness::ShrinkOptions first = so;
    first.max_reruns = so.max_reruns - reruns;
    auto shrunk = harness::Shrink(from, outcome, rerun, first);
    if (!shrunk.ok()) return shrunk.status();
    reruns += shrunk->reruns;
    // Shrink again from the result while that keeps helping: a small input
    // often admits steps (e.g. going sequential) the large one did not.
    for (int pass = 0; pass < 3 && shrunk->complete && shrunk->input.size() > 1; ++pass) {
      harness::ShrinkOptions again = so;
      again.max_reruns = so.max_reruns - reruns;
      if (again.max_reruns <= 0) break;
      auto next = harness::Shrink(shrunk->input, shrunk->last, rerun, again);
      if (!next.ok()) return next.status();
      reruns += next->reruns;
      bool changed = next->input != shrunk->input;
      shrunk = std::move(next);
      if (!changed) break;
    }
    out->input = shrunk->input;
    out->trace = shrunk->last.trace;
    out->verdict = shrunk->last.verdict;
    out->shrunk_size = shrunk->input.size();
    // The signature of the minimal counterexample: with the noise gone, the
    // spec location it names is the one this bug always reaches.
    out->signature = harness::ComputeSignature(out->verdict, out->trace);
    out->shrink_complete = shrunk->complete;
    // How reliably does the result replay? Races in the SUT can make a
    // counterexample reproduce only sometimes.
    int same = 0;
    for (int i = 0; i < options.verify; ++i) {
      auto r = rerun(out->input);
      if (!r.ok()) return r.status();
      same += r->reproduced && harness::ComputeSignature(r->verdict, r->trace) == out->signature;
    }
    out->replays_verified = options.verify;
    out->replays_reproduced = same;
    return absl::OkStatus();
  };

  harness::RerunOutcome original;
  original.reproduced = true;
  original.sent = result.inputs;
  original.trace = result.trace;
  original.verdict = cx.verdict;
  absl::Status s = shrink_and_verify(result.inputs, original, &cx);
  if (!s.ok()) return s;

  // The input one request at a time (each waits for the previous
  // response). If that fails too — maybe showing the bug differently, e.g.
  // at an earlier response — shrink from there and keep the result when it
  // replays at least `min_better` more often than the current one: the
  // server's order is then fixed and the result does not race.
  auto try_sequential = [&](const std::vector<harness::InputItem>& input, int min_better) -> absl::Status {
    if (input.size() < 2 || reruns >= so.max_reruns) return absl::OkStatus();
    auto r = RunJob(spec, RerunOptions(cx, harness::OneAtATime(input), job));
    ++reruns;
    if (!r.ok()) return r.status();
    bool failed = r->outcome == Outcome::kSafety || r->outcome == Outcome::kLiveness ||
                  r->outcome == Outcome::kSutCrash;
    if (!failed) return absl::OkStatus();
    harness::RerunOutcome seq;
    seq.reproduced = true;
    seq.sent = r->inputs;
    seq.trace = r->trace;
    seq.verdict = VerdictOf(*r);
    std::string saved_class = failure_class;
    failure_class = harness::FailureClass(seq.verdict, r->trace);
    harness::Counterexample alt = cx;
    absl::Status t = shrink_and_verify(seq.sent, seq, &alt);
    if (!t.ok()) return t;
    if (alt.replays_reproduced >= cx.replays_reproduced + min_better) {
      cx = std::move(alt);
    } else {
      failure_class = saved_class;
    }
    return absl::OkStatus();
  };
  // A flaky result: the failure found depended on timing; start over from
  // the original input sent one request at a time.
  if (cx.replays_reproduced < cx.replays_verified) {
    if (absl::Status t = try_sequential(result.inputs, 1); !t.ok()) return t;
  }
  // A result whose requests still overlap may race in replays even when
  // its verification replays all agreed (which response arrives first can
  // decide where the failure shows): prefer its one-at-a-time form when
  // that reproduces as reliably.
  if (harness::Overlapping(cx.input)) {
    if (absl::Status t = try_sequential(cx.input, 0); !t.ok()) return t;
  }
  cx.shrink_reruns = reruns;
  cx.shrink_seconds = so.elapsed();
  return cx;
}

}  // namespace dualswarm::workers
