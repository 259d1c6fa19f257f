#include "workers/runner/shrink_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engine/harness/fresh_resources.h"
#include "engine/harness/parallel_for.h"
#include "engine/harness/repetition.h"
#include "engine/harness/shrinker.h"
#include "workers/sut/spare_suts.h"
#include "workers/sut/sut_reaper.h"
#include "workers/sut/warm_suts.h"

namespace dualswarm::workers {

namespace {

// Pairs of requests the server took in the opposite order to their labels
// (the order they were sent in).
size_t Inversions(const std::vector<int64_t>& order) {
  size_t n = 0;
  for (size_t i = 0; i < order.size(); ++i)
    for (size_t j = i + 1; j < order.size(); ++j) n += order[i] > order[j];
  return n;
}

}  // namespace

harness::Verdict VerdictOf(const JobResult& r) {
  harness::Verdict v;
  v.kind = OutcomeName(r.outcome);
  v.reason = r.reason;
  if (r.outcome == Outcome::kLiveness) v.label = r.overdue_label;
  if (r.outcome == Outcome::kProperty && r.verdict.kind == check::Verdict::Kind::kReject) {
    // The event that left the property no way to hold, and the property.
    v.label = r.verdict.observation.label;
    for (const auto& d : r.verdict.reasons) {
      v.details.push_back(d.text);
      v.field = d.field;
      v.spec_loc = d.spec_loc;
      v.spec_locs.push_back(d.spec_loc);
    }
  }
  if (r.outcome == Outcome::kSafety && r.verdict.kind == check::Verdict::Kind::kReject) {
    v.label = r.verdict.observation.label;
    v.origin_side = r.verdict.observation.side == check::Side::kOrigin;
    // The primary explanation: one whose status the SUT contradicted (the
    // expectation a reader names the bug by: "404 expected"); of those, the
    // one whose server order departs least from the order the requests
    // were sent in (a concurrent trace also has explanations in which a
    // later request overtook the failing one: a concurrent DELETE makes
    // "404 expected" as true as "304 expected", but only the send order
    // survives shrinking to one request at a time, so only it keeps the
    // finding's signature through shrinking); then the smallest (location,
    // field) — stable whichever explanation the search tried first.
    const check::DeathReason* best = nullptr;
    auto rank = [](const check::DeathReason& d) {
      return std::make_tuple(d.field != "status", Inversions(d.server_order), d.spec_loc, d.field);
    };
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
  o.exec.max_in_flight_per_connection = cx.max_per_connection;
  if (auto bo = check::ParseBranchOrder(cx.branch_order); bo.ok()) o.exec.checker.branch_order = *bo;
  if (auto m = harness::FeatureMask::Parse(cx.feature_mask); m.ok()) o.exec.mask = *m;
  o.response_timeout_ms = cx.response_timeout_ms;
  o.nodes = cx.nodes;
  o.connect_node = cx.connect_node;
  o.origins = cx.origins;
  o.exec.origin_gen = cx.origin_gen;
  o.nemesis.faults = cx.nemesis_faults;
  o.nemesis.interval_ms = cx.nemesis_interval_ms;
  o.nemesis.duration_ms = cx.nemesis_duration_ms;
  o.exec.replay = harness::Repeated(input, cx.repeat);
  o.exec.origin_answers = cx.origin_answers;
  return o;
}

// Replay options for a rerun of `job`'s finding: the counterexample's
// swarm dimensions, the job's SUT launch and adapter configuration.
JobOptions RerunOptions(const harness::Counterexample& cx, const std::vector<harness::InputItem>& input,
                        const JobOptions& job) {
  JobOptions o = ReplayOptions(cx, input);
  o.launch = job.launch;
  o.adapter_config = job.adapter_config;
  o.ready_timeout_ms = job.ready_timeout_ms;
  o.ready_probe = job.ready_probe;
  o.work_root = job.work_root;
  o.cancel = job.cancel;
  return o;
}

namespace {

// How many times a rerun whose SUT could not be started or reached is
// tried before shrinking gives up.
constexpr int kRerunAttempts = 3;

// A rare race (repetition.h): each shrinking candidate is sent as many
// times over as makes about kRepeatedRequests requests in one run, for at
// most kRepeatedSeconds (a slow SUT sends fewer rounds); the
// first candidate is the failing request, the ones that overlapped it and
// up to kRaceSetup earlier ones on its resource, at most kMaxRaceCore.
constexpr int kRepeatedRequests = 1500;
constexpr double kRepeatedSeconds = 1.0;
constexpr size_t kRaceSetup = 4;
constexpr size_t kMaxRaceCore = 10;
// A rare race may not fail in the first run of its window: the window is
// run up to kWindowAttempts times, then every earlier request on the
// failing request's resource (at most kMaxRaceResource, the latest kept)
// up to kResourceAttempts times, before shrinking starts from the whole
// input (each run of which is slower and fails no more often).
constexpr int kWindowAttempts = 3;
// A rerun's check may take at least this long, however little of the
// shrinking budget is left.
constexpr double kMinRerunCheckSeconds = 1.0;
constexpr int kResourceAttempts = 2;
// The most SUTs launched ahead of reruns by default (ShrinkJobOptions::
// prelaunch): a server that takes 1 s to start while candidates run in
// 0.1-0.3 s (ds-ref-webdav behind a 1 s sleep) keeps about four busy.
constexpr int kDefaultPrelaunch = 4;
constexpr size_t kMaxRaceResource = 100;
// A finding whose result still races is looked for again one request at a
// time (TryFoundOneAtATime) in up to this many runs, each with its own seed
// (the job's plus a multiple of the stride: not another job's of the same
// swarm, whose seeds are consecutive), while this much of the budget is
// left.
constexpr int kOneAtATimeSearches = 3;
constexpr uint64_t kOneAtATimeSeedStride = 1'000'003;
constexpr double kMinOneAtATimeSeconds = 4.0;

// Bounds a run's check to `cap` seconds (0 or less in `o` is no bound).
void CapCheckSeconds(double cap, JobOptions* o) {
  double& max_seconds = o->exec.checker.max_seconds;
  if (max_seconds <= 0 || max_seconds > cap) max_seconds = cap;
}

// The rounds a candidate of `size` requests is sent in, when repeating.
int RoundsFor(size_t size) {
  if (size == 0) return 1;
  const size_t rounds = (kRepeatedRequests + size - 1) / size;
  return static_cast<int>(std::min<size_t>(rounds, harness::kMaxRepeat));
}

// Runs a shrinking rerun; a failure to run it at all (not a verdict: the
// SUT did not start, a port picked for it was taken meanwhile, the machine
// was too busy for the readiness probe) is tried again, since under load
// such failures come and go, and giving up leaves the finding unshrunk
// under another signature. Cancellation and bad input are not retried.
absl::StatusOr<JobResult> RunRerun(std::shared_ptr<const lang::Spec> spec, const JobOptions& o) {
  absl::StatusOr<JobResult> r = RunJob(spec, o);
  for (int attempt = 1;
       attempt < kRerunAttempts && !r.ok() && !absl::IsCancelled(r.status()) && !absl::IsInvalidArgument(r.status());
       ++attempt) {
    std::fprintf(stderr, "shrinking: rerun %d of %d could not run (%s); trying again\n", attempt, kRerunAttempts,
                 std::string(r.status().message()).c_str());
    r = RunJob(spec, o);
  }
  return r;
}

// What `r` sent, each request with the origin answers attributed to it in
// this run (origin_answers.h), and those it was sent with for keys this run
// attributed none of: a request a cache answered from its store this time
// may need its own answer again in a candidate without the request that
// stored it.
std::vector<harness::InputItem> WithAttachedAnswers(const JobResult& r) {
  std::vector<harness::InputItem> sent = r.inputs;
  if (r.origin_answers.empty()) return sent;
  std::vector<std::vector<harness::AttachedAnswer>> by_request =
      harness::AnswersByClientRequest(r.origin_answers, r.trace, sent.size());
  for (size_t k = 0; k < sent.size(); ++k) {
    if (by_request[k].empty()) continue;
    std::vector<harness::AttachedAnswer> merged = std::move(by_request[k]);
    for (harness::AttachedAnswer& carried : sent[k].origin_answers) {
      const bool renewed = std::any_of(merged.begin(), merged.end(),
                                       [&](const harness::AttachedAnswer& a) { return a.key == carried.key; });
      if (renewed) continue;
      carried.order = -1;  // its place was in another run
      merged.push_back(std::move(carried));
    }
    sent[k].origin_answers = std::move(merged);
  }
  return sent;
}

// The counterexample of `result` as found: the job's identity and swarm
// dimensions, its whole input and trace.
harness::Counterexample AsFound(const lang::Spec& spec, const JobOptions& job, const JobResult& result) {
  harness::Counterexample cx;
  cx.spec_name = spec.name;
  cx.spec_hash = spec.content_hash;
  cx.spec_file = spec.file;
  cx.target = job.launch.empty() ? job.target : job.launch;
  cx.adapter = job.adapter;
  cx.seed = job.exec.seed;
  cx.branch_order = check::BranchOrderName(job.exec.checker.branch_order);
  cx.feature_mask = job.exec.mask.ToString();
  cx.connections = job.exec.connections;
  cx.max_in_flight = job.exec.max_in_flight;
  cx.max_per_connection = job.exec.max_in_flight_per_connection;
  cx.response_timeout_ms = job.response_timeout_ms;
  cx.nodes = job.nodes;
  cx.connect_node = job.connect_node;
  cx.origins = job.origins;
  cx.origin_gen = job.exec.origin_gen;
  cx.nemesis_faults = job.nemesis.faults;
  cx.nemesis_interval_ms = job.nemesis.interval_ms;
  cx.nemesis_duration_ms = job.nemesis.duration_ms;
  cx.verdict = VerdictOf(result);
  cx.signature = harness::ComputeSignature(cx.verdict, result.trace);
  cx.input = WithAttachedAnswers(result);
  cx.origin_answers = result.origin_answers;
  cx.trace = result.trace;
  cx.original_size = result.inputs.size();
  cx.shrunk_size = result.inputs.size();
  cx.shrink_complete = false;
  return cx;
}

// What a run showed, as the shrinker sees it: reproduced, as a failure
// found is; a rerun's caller sets whether it failed the same way.
harness::RerunOutcome FailedRun(const JobResult& r) {
  harness::RerunOutcome out;
  out.reproduced = true;
  out.sent = WithAttachedAnswers(r);
  out.origin_answers = r.origin_answers;
  out.trace = r.trace;
  out.verdict = VerdictOf(r);
  return out;
}

// Shrinks one finding by rerunning candidates against fresh SUTs, within
// one budget of reruns and seconds shared by every pass.
class FindingShrinker {
 public:
  FindingShrinker(std::shared_ptr<const lang::Spec> spec, const JobOptions& job, const ShrinkJobOptions& options,
                  harness::Counterexample cx)
      : spec_(std::move(spec)),
        job_(job),
        options_(options),
        cx_(std::move(cx)),
        found_origin_answers_(cx_.origin_answers),
        failure_class_(harness::FailureClass(cx_.verdict, cx_.trace)),
        start_(std::chrono::steady_clock::now()) {
    so_.max_reruns = options.max_reruns;
    so_.max_seconds = options.max_seconds;
    so_.attempts = options.attempts;
    so_.confirm = options.confirm;
    so_.jobs = options.jobs;
    so_.elapsed = [start = start_] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (!options.reset_command.empty()) {
      warm_ = std::make_unique<WarmSuts>(options.reset_command, options.reset_timeout_ms, &reaper_);
    } else if (options.reuse_by_partition && spec_->ast.has_partition && !job.launch.empty() && job.origins == 0 &&
               job.nemesis.faults.empty() && cx_.verdict.kind != "liveness" && !harness::HasFreshSuffixes(cx_.input)) {
      // (A liveness rerun's SUT is never reused: it may be wedged.)
      warm_ = std::make_unique<WarmSuts>("", options.reset_timeout_ms, &reaper_);  // reused as they are
      renaming_ = true;
    }
    const int most = options.prelaunch < 0 ? std::max(kDefaultPrelaunch, options.jobs) : options.prelaunch;
    if (std::optional<SpareLaunch> launch = SpareLaunchFor(job); launch && most > 0)
      // Reruns that reuse running SUTs start the pool empty: it launches
      // only once one found none to reuse.
      spares_ = std::make_unique<SpareSuts>(*std::move(launch), warm_ ? 0 : std::clamp(options.jobs, 1, most), most,
                                            &reaper_);
    if (options.on_progress) {
      // A pass counts from 0: add what earlier passes spent.
      so_.on_progress = [this](const harness::ShrinkProgress& pass) {
        harness::ShrinkProgress p = pass;
        p.reruns += reruns_;
        p.reproduced += reproduced_;
        p.flaky |= seen_flaky_;
        options_.on_progress(p);
      };
    }
  }

  absl::StatusOr<harness::Counterexample> Run(const JobResult& found) {
    // A possible race (a safety finding whose requests overlapped): every
    // candidate is sent many times over in one run (repetition.h), so that a
    // race whose window a few requests meet rarely still fails in one run,
    // starting from the race's own requests when those fail again.
    repeating_ = MayBeARace(found);
    // Not for a possible race: ds-ref-kv mutant 3 (a snapshot of every key,
    // refreshed once a second) shrank on reused SUTs to results that no
    // fresh SUT reproduced in 6 of 10 seeds, fresh confirmations and all.
    if (repeating_ && renaming_) StopRenaming();
    harness::RerunOutcome outcome = FailedRun(found);
    std::vector<harness::InputItem> from = outcome.sent;
    if (repeating_) {
      if (absl::Status s = StartFromRaceWindow(found, &from, &outcome); !s.ok()) return s;
    }
    // An intermediary's finding has no race rounds (its origin answers are
    // kept per request), and which of its origin connections answers first
    // can decide whether what it sent fails again: look for the failure
    // one request at a time first, before shrinking spends the budget on
    // an input that may seldom fail.
    if (job_.origins > 0) {
      absl::StatusOr<bool> kept = TryFoundOneAtATime();
      if (!kept.ok()) return kept.status();
      if (*kept) return Finished();
    }
    if (renaming_) {
      absl::StatusOr<bool> survives = SurvivesReuse(from);
      if (!survives.ok()) return survives.status();
      if (!*survives) StopRenaming();
    }
    if (absl::Status s = ShrinkAndVerify(from, outcome, &cx_); !s.ok()) return s;
    // Shrunk on reused SUTs, but no fresh one reproduced it: the failure
    // needed state earlier reruns left there (server-wide state the
    // partition does not cover, e.g. a request counter). Again on fresh SUTs.
    if (renaming_ && cx_.replays_verified > 0 && cx_.replays_reproduced == 0) {
      StopRenaming();
      if (absl::Status s = ShrinkAndVerify(from, outcome, &cx_); !s.ok()) return s;
    }
    // A flaky result: the failure found depended on timing; start over from
    // the original input sent one request at a time.
    if (cx_.replays_reproduced < cx_.replays_verified) {
      if (absl::Status s = TrySequential(FailedRun(found).sent, 1); !s.ok()) return s;
    }
    // A result whose requests still overlap may race in replays even when
    // its verification replays all agreed (which response arrives first can
    // decide where the failure shows): prefer its one-at-a-time form when
    // that reproduces as reliably.
    if (harness::Overlapping(cx_.input)) {
      if (absl::Status s = TrySequential(cx_.input, 0); !s.ok()) return s;
    }
    if (cx_.replays_reproduced < cx_.replays_verified || !cx_.shrink_complete) {
      if (absl::StatusOr<bool> kept = TryFoundOneAtATime(); !kept.ok()) return kept.status();
    }
    // Repeated, but maybe as reliable sent once: then without the rounds.
    if (cx_.repeat > 1) {
      if (absl::Status s = TryOnce(); !s.ok()) return s;
    }
    return Finished();
  }

 private:
  // The counterexample, with what shrinking it spent.
  harness::Counterexample Finished() {
    cx_.shrink_reruns = reruns_ + extra_reruns_;
    cx_.shrink_seconds = so_.elapsed();
    return std::move(cx_);
  }

  // A rerun of `input`, answering as the origin did when the finding was
  // made (a counterexample keeps only what its own run used).
  // With `reuse` (and renaming_), a run on a SUT an earlier rerun used.
  JobOptions OptionsFor(const std::vector<harness::InputItem>& input, bool reuse = true) const {
    // Fresh partitions for a running SUT, or a fresh SUT.
    std::optional<std::vector<harness::InputItem>> renamed;
    if (renaming_ && reuse) renamed = harness::WithFreshResources(input, *spec_, absl::StrCat(++renames_));
    const std::vector<harness::InputItem>& sent = renamed ? *renamed : input;
    JobOptions o = RerunOptions(cx_, sent, job_);
    const int rounds = RoundsOf(input);
    o.exec.replay = harness::Repeated(sent, rounds);
    // Many rounds stop after kRepeatedSeconds all the same (a slow SUT).
    if (rounds > 1 && (o.time_budget_s <= 0 || o.time_budget_s > kRepeatedSeconds)) o.time_budget_s = kRepeatedSeconds;
    // A rerun's check ends with the shrinking budget (INCONCLUSIVE, not
    // reproduced): a slow check of a long repeated run under load took
    // minutes past a 15 s budget.
    CapCheckSeconds(std::max(kMinRerunCheckSeconds, so_.max_seconds - so_.elapsed()), &o);
    o.exec.origin_answers = found_origin_answers_;
    o.sut_reaper = &reaper_;
    o.warm_suts = renaming_ && !renamed ? nullptr : warm_.get();
    o.spare_suts = spares_.get();
    return o;
  }

  // Whether the failure survives a SUT an earlier rerun used: `input`
  // (renamed) run twice, the second time on the first run's SUT. A failure
  // that needs server-wide state earlier runs change (kv mutant 7: the
  // first key ever written) fails the first time only. A first run that
  // does not fail says nothing (a flaky failure): true then.
  absl::StatusOr<bool> SurvivesReuse(const std::vector<harness::InputItem>& input) {
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<harness::RerunOutcome> r = RerunWith(OptionsFor(input), input.size(), RoundsOf(input));
      ++reruns_;
      if (!r.ok()) return r.status();
      if (!r->reproduced) return run == 0;
      ++reproduced_;
    }
    return true;
  }

  // Every later rerun launches a fresh SUT.
  void StopRenaming() {
    renaming_ = false;
    warm_.reset();  // its idle SUTs go to the reaper
  }

  // One candidate run: reproduced when it fails in the same class.
  // With renaming_, a candidate counts as reproduced only once it failed
  // on a fresh SUT too: its first run reuses a SUT (most candidates do not
  // reproduce, and that run is the one reuse makes cheap) and, when it
  // fails there, runs again on a fresh SUT, whose outcome counts; runs
  // that confirm it (ShrinkOptions::confirm) reuse SUTs once a fresh one
  // reproduced it. State a reused SUT keeps across partitions (ds-ref-kv
  // mutant 3's snapshot of every key, refreshed once a second) made
  // candidates fail there that never fail on a fresh one: 6 of 10 seeds'
  // results replayed in none of 20 fresh replays.
  absl::StatusOr<harness::RerunOutcome> Rerun(const std::vector<harness::InputItem>& input) {
    if (!renaming_) return RerunWith(OptionsFor(input), input.size(), RoundsOf(input));
    const uint64_t key = CandidateKey(input);
    bool reuse;
    {
      absl::MutexLock lock(&runs_mu_);
      CandidateRuns& runs = runs_of_[key];
      reuse = runs.runs++ == 0 || runs.fresh_reproduced;
    }
    absl::StatusOr<harness::RerunOutcome> r = RerunWith(OptionsFor(input, reuse), input.size(), RoundsOf(input));
    if (!r.ok() || !r->reproduced) return r;
    if (reuse) {
      {
        absl::MutexLock lock(&runs_mu_);
        if (runs_of_[key].fresh_reproduced) return r;
      }
      ++extra_reruns_;
      r = RerunWith(OptionsFor(input, /*reuse=*/false), input.size(), RoundsOf(input));
      if (!r.ok() || !r->reproduced) return r;
    }
    absl::MutexLock lock(&runs_mu_);
    runs_of_[key].fresh_reproduced = true;
    return r;
  }
  // What names a candidate among the reruns (a hash of its items).
  static uint64_t CandidateKey(const std::vector<harness::InputItem>& input) {
    uint64_t h = input.size();
    for (const harness::InputItem& item : input) {
      h = h * 1099511628211ULL ^ item.jexpr.Hash() ^ (item.fault.Hash() << 1) ^ static_cast<uint64_t>(item.conn);
      for (int a : item.after) h = h * 31 + static_cast<uint64_t>(a);
    }
    return h;
  }
  // A run of `options`, whose input is a core of `core_size` requests sent
  // `repeat` times over: seen as a run of the core (FoldRepeated).
  absl::StatusOr<harness::RerunOutcome> RerunWith(const JobOptions& options, size_t core_size, int repeat) {
    auto r = RunRerun(spec_, options);
    if (!r.ok()) return r.status();
    harness::RerunOutcome out = FailedRun(*r);
    if (repeat > 1) harness::FoldRepeated(core_size, &out);
    out.reproduced = r->outcome != Outcome::kPassed && harness::FailureClass(out.verdict, out.trace) == failure_class_;
    return out;
  }

  harness::RerunFn RerunFn() {
    return [this](const std::vector<harness::InputItem>& input) { return Rerun(input); };
  }

  // Shrinks `from` (whose run produced `outcome`) into *out and measures how
  // reliably the result replays.
  absl::Status ShrinkAndVerify(const std::vector<harness::InputItem>& from, const harness::RerunOutcome& outcome,
                               harness::Counterexample* out) {
    absl::StatusOr<harness::ShrinkResult> shrunk = ShrinkRepeatedly(from, outcome);
    if (!shrunk.ok()) return shrunk.status();
    // The names the user's requests had (reruns renamed them: renaming_).
    out->input = renaming_ ? harness::WithoutFreshSuffixes(shrunk->input) : shrunk->input;
    out->trace = shrunk->last.trace;
    out->verdict = shrunk->last.verdict;
    out->shrunk_size = shrunk->input.size();
    // The signature of the minimal counterexample: with the noise gone, the
    // spec location it names is the one this bug always reaches.
    out->signature = harness::ComputeSignature(out->verdict, out->trace);
    out->shrink_complete = shrunk->complete;
    out->repeat = RoundsOf(out->input);
    out->failed_round = shrunk->last.round;
    // The answers the last run of the result gave (some came attached to
    // its requests), per key and occurrence as a replay looks them up.
    out->origin_answers = harness::OriginAnswersUsedBy(
        shrunk->last.origin_answers.empty() ? found_origin_answers_ : shrunk->last.origin_answers, out->trace);
    // A renamed rerun's trace shows the renamed requests: a reproducing
    // replay (fresh SUT, the user's names) shows the finding instead.
    return VerifyReplays(out, /*shown_from_replay=*/renaming_);
  }

  // Shrinks, then shrinks the result again while that keeps helping: a
  // small input often admits steps (e.g. going sequential) the large one
  // did not.
  absl::StatusOr<harness::ShrinkResult> ShrinkRepeatedly(const std::vector<harness::InputItem>& from,
                                                         const harness::RerunOutcome& outcome) {
    auto shrunk = harness::Shrink(from, outcome, RerunFn(), Remaining());
    if (!shrunk.ok()) return shrunk.status();
    reruns_ += shrunk->reruns;
    reproduced_ += shrunk->reproduced;
    seen_flaky_ |= shrunk->seen_flaky;
    for (int pass = 0; pass < 3 && shrunk->complete && shrunk->input.size() > 1; ++pass) {
      harness::ShrinkOptions again = Remaining();
      if (again.max_reruns <= 0) break;
      auto next = harness::Shrink(shrunk->input, shrunk->last, RerunFn(), again);
      if (!next.ok()) return next.status();
      reruns_ += next->reruns;
      reproduced_ += next->reproduced;
      seen_flaky_ |= next->seen_flaky;
      bool changed = next->input != shrunk->input;
      shrunk = std::move(next);
      if (!changed) break;
    }
    return shrunk;
  }

  // How reliably does the result replay? Races in the SUT can make a
  // counterexample reproduce only sometimes. With `shown_from_replay`, the
  // trace and verdict shown become a reproducing replay's.
  absl::Status VerifyReplays(harness::Counterexample* out, bool shown_from_replay = false) {
    const int n = std::max(options_.verify, 0);
    std::vector<absl::StatusOr<harness::RerunOutcome>> replays(static_cast<size_t>(n));
    JobOptions as_replayed = RerunOptions(*out, out->input, job_);  // as `dualswarm replay` will
    as_replayed.sut_reaper = &reaper_;
    // No spares: `dualswarm replay` sends at once to a server it just
    // launched, and a spare may have been up for seconds (a cluster that
    // elected a leader meanwhile, timers that fired): the rate measured
    // must be the one a user's replays will see.
    // Each replay's check within the shrinking budget (one that runs out
    // does not count as reproduced).
    CapCheckSeconds(std::max(kMinRerunCheckSeconds, so_.max_seconds), &as_replayed);
    absl::Mutex progress_mu;
    harness::ShrinkProgress progress{.reruns = reruns_,
                                     .reproduced = reproduced_,
                                     .size = out->input.size(),
                                     .flaky = seen_flaky_,
                                     .replays_planned = n};
    harness::ParallelForInWaves(replays.size(), static_cast<size_t>(std::max(options_.jobs, 1)), [&](size_t i) {
      replays[i] = RerunWith(as_replayed, out->input.size(), out->repeat);
      if (!options_.on_progress) return;
      absl::MutexLock lock(&progress_mu);
      ++progress.replays;
      progress.replays_reproduced +=
          replays[i].ok() && replays[i]->reproduced &&
          harness::ComputeSignature(replays[i]->verdict, replays[i]->trace) == out->signature;
      options_.on_progress(progress);
    });
    int same = 0;
    for (const auto& r : replays) {
      if (!r.ok()) return r.status();
      const bool reproduced = r->reproduced && harness::ComputeSignature(r->verdict, r->trace) == out->signature;
      if (reproduced && shown_from_replay && same == 0) {
        out->trace = r->trace;
        out->verdict = r->verdict;
        out->failed_round = r->round;
      }
      same += reproduced;
    }
    out->replays_verified = options_.verify;
    out->replays_reproduced = same;
    return absl::OkStatus();
  }

  // The rounds a candidate is sent in: many while repeating, else one.
  int RoundsOf(const std::vector<harness::InputItem>& input) const { return repeating_ ? RoundsFor(input.size()) : 1; }

  // A safety finding whose requests overlapped, without faults (a round
  // would repeat them too) and not an intermediary's (its origin answers
  // are kept per request, not per round).
  bool MayBeARace(const JobResult& found) const {
    const harness::Verdict& v = cx_.verdict;
    const bool faults =
        std::any_of(found.inputs.begin(), found.inputs.end(), [](const harness::InputItem& i) { return i.is_fault(); });
    return job_.origins == 0 && !faults && v.kind == "safety" && !v.origin_side && v.label >= 1 &&
           harness::Overlapping(found.inputs);
  }

  // The race's own requests (RaceWindow) become where shrinking starts when,
  // repeated, they fail the same way: first the window, then the failing
  // resource's requests, each run a few times (a rare race's first run may
  // miss it). One that missed before it reproduced shows the failure
  // flaky: later candidates then get ShrinkOptions::attempts too.
  absl::Status StartFromRaceWindow(const JobResult& found, std::vector<harness::InputItem>* from,
                                   harness::RerunOutcome* outcome) {
    const int failing = static_cast<int>((cx_.verdict.label - 1) / 2);
    const std::pair<std::vector<harness::InputItem>, int> starts[] = {
        {harness::RaceWindow(found.inputs, failing, kRaceSetup, kMaxRaceCore), kWindowAttempts},
        {harness::RaceWindow(found.inputs, failing, found.inputs.size(), kMaxRaceResource), kResourceAttempts},
    };
    size_t tried_size = 0;
    for (const auto& [start, attempts] : starts) {
      if (start.size() < 2 || start.size() >= found.inputs.size() || start.size() == tried_size) continue;
      tried_size = start.size();
      for (int attempt = 0; attempt < attempts; ++attempt) {
        if (reruns_ >= so_.max_reruns || so_.elapsed() >= so_.max_seconds) return absl::OkStatus();
        auto run = Rerun(start);
        ++reruns_;
        if (!run.ok()) return run.status();
        if (!run->reproduced) continue;
        ++reproduced_;
        seen_flaky_ |= attempt > 0;
        *from = start;
        *outcome = *std::move(run);
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  // The repeated result sent once: kept when its replays reproduce as often.
  absl::Status TryOnce() {
    harness::Counterexample once = cx_;
    once.repeat = 1;
    once.failed_round = 0;
    if (absl::Status s = VerifyReplays(&once, /*shown_from_replay=*/true); !s.ok()) return s;
    if (once.replays_reproduced > 0 && once.replays_reproduced >= cx_.replays_reproduced) cx_ = std::move(once);
    return absl::OkStatus();
  }

  // The input one request at a time (each waits for the previous
  // response). If that fails too — maybe showing the bug differently, e.g.
  // at an earlier response — shrink from there and keep the result when it
  // replays at least `min_better` more often than the current one: the
  // server's order is then fixed and the result does not race.
  absl::Status TrySequential(const std::vector<harness::InputItem>& input, int min_better) {
    if (input.size() < 2 || reruns_ >= so_.max_reruns) return absl::OkStatus();
    // On a fresh SUT: what it shows is where shrinking starts (Rerun).
    auto r = RunRerun(spec_, OptionsFor(harness::OneAtATime(input), /*reuse=*/false));
    ++reruns_;
    if (!r.ok()) return r.status();
    if (!IsSutFault(r->outcome)) return absl::OkStatus();
    harness::RerunOutcome seq = FailedRun(*r);
    std::string saved_class = failure_class_;
    failure_class_ = harness::FailureClass(seq.verdict, r->trace);
    harness::Counterexample alt = cx_;
    if (absl::Status s = ShrinkAndVerify(seq.sent, seq, &alt); !s.ok()) return s;
    if (alt.replays_reproduced >= cx_.replays_reproduced + min_better) {
      cx_ = std::move(alt);
    } else {
      failure_class_ = saved_class;
    }
    return absl::OkStatus();
  }

  // A result that still races (not every replay reproduces it) or that
  // shrinking could not finish may be a bug a sequential input shows, which
  // this run happened to reach through a race: ds-ref-cache mutant 7
  // revalidates with an old entity-tag, and whichever of its two origin
  // connections answers first decides what the found input shows, so no
  // rerun reproduces it reliably. Testing again one request at a time, with
  // new seeds, within what is left of the budget, finds such a bug in an
  // order the SUT cannot race; a failure of the same class found that way
  // is shrunk as its own counterexample and kept when it replays more
  // reliably, or as reliably and smaller (true then).
  absl::StatusOr<bool> TryFoundOneAtATime() {
    if (!SearchOneAtATimeMayHelp()) return false;
    // The searches of one shrink share kOneAtATimeSearches seeds: a later
    // call does not repeat an earlier one's runs.
    while (searches_ < kOneAtATimeSearches) {
      const double left = so_.max_seconds - so_.elapsed();
      if (left < kMinOneAtATimeSeconds || reruns_ >= so_.max_reruns) return false;
      const int search = ++searches_;
      JobOptions o = job_;
      o.exec.connections = 1;
      o.exec.max_in_flight = 1;
      o.exec.max_in_flight_per_connection = 0;
      o.exec.seed = job_.exec.seed + static_cast<uint64_t>(search) * kOneAtATimeSeedStride;
      // At most a third of what is left: shrinking needs the rest.
      if (o.time_budget_s <= 0 || o.time_budget_s > left / 3) o.time_budget_s = left / 3;
      CapCheckSeconds(left / 3, &o);
      o.on_progress = nullptr;
      o.sut_reaper = &reaper_;
      o.warm_suts = nullptr;
      o.spare_suts = spares_.get();
      absl::StatusOr<JobResult> r = RunRerun(spec_, o);
      ++reruns_;
      if (!r.ok()) {
        if (absl::IsCancelled(r.status())) return r.status();
        // An optional step: shrinking goes on without it.
        std::fprintf(stderr, "shrinking: one request at a time, seed %llu: could not run (%s)\n",
                     static_cast<unsigned long long>(o.exec.seed), std::string(r.status().message()).c_str());
        return false;
      }
      harness::RerunOutcome seq = FailedRun(*r);
      const std::string seq_class = harness::FailureClass(seq.verdict, seq.trace);
      if (!IsSutFault(r->outcome) || !SameFailureOneAtATime(seq_class)) {
        std::fprintf(stderr, "shrinking: one request at a time, seed %llu: %s after %zu requests, not %s\n",
                     static_cast<unsigned long long>(o.exec.seed),
                     IsSutFault(r->outcome) ? seq_class.c_str() : OutcomeName(r->outcome), seq.sent.size(),
                     failure_class_.c_str());
        continue;
      }
      std::fprintf(stderr,
                   "shrinking: found the same failure again one request at a time (seed %llu, %zu requests); "
                   "shrinking that\n",
                   static_cast<unsigned long long>(o.exec.seed), seq.sent.size());
      absl::StatusOr<bool> kept = ShrinkInstead(o, *r, seq);
      if (!kept.ok() || *kept) return kept;
    }
    return false;
  }

  // Whether a failure of class `c`, found one request at a time, is the
  // one being shrunk. For an intermediary only the kind and the method
  // count: a client response relays a status its origin (the tester) drew
  // at random, and ds-ref-cache mutant 7's stale entity-tag shows either as
  // the conditional request it forwards or as the response it then serves
  // (a GET answered 200 or 500, as the origin's answer fell). What the
  // shrunk result shows is what its signature says.
  bool SameFailureOneAtATime(const std::string& c) const {
    if (job_.origins == 0) return c == failure_class_;
    auto without_status = [](const std::string& x) { return x.substr(0, x.find("|status=")); };
    return without_status(c) == without_status(failure_class_);
  }

  // Whether testing one request at a time can find what the job found in
  // another order: the job sent concurrently, to a SUT it launched (and
  // replays verify results: what decides whether one is kept).
  bool SearchOneAtATimeMayHelp() const {
    const bool concurrent = job_.exec.connections > 1 || job_.exec.max_in_flight > 1;
    return !job_.launch.empty() && !job_.exec.replay && concurrent && options_.verify > 0;
  }

  // Shrinks the failure `run` (of `job`, `seq` as the shrinker sees it) as
  // the finding's counterexample (whose seed, connections, origin answers
  // and size before shrinking become the run's); keeps the result (true)
  // when some replay reproduces it and it replays more often than the
  // current one, or as often and is smaller. Before the finding itself was
  // shrunk (no replays yet to compare with), only a result every replay
  // reproduces is kept: otherwise the finding is shrunk as usual.
  absl::StatusOr<bool> ShrinkInstead(const JobOptions& job, const JobResult& run, const harness::RerunOutcome& seq) {
    harness::Counterexample current = cx_;
    std::vector<harness::OriginAnswerItem> current_answers = found_origin_answers_;
    const bool current_repeating = repeating_;
    const bool current_flaky = seen_flaky_;
    const std::string current_class = failure_class_;
    cx_ = AsFound(*spec_, job, run);
    found_origin_answers_ = run.origin_answers;
    failure_class_ = harness::FailureClass(seq.verdict, seq.trace);  // its reruns must show its own
    repeating_ = false;                                              // one request at a time: nothing to race
    harness::Counterexample alt = cx_;
    absl::Status s = ShrinkAndVerify(seq.sent, seq, &alt);
    if (!s.ok()) return s;
    const bool better =
        current.replays_verified == 0
            ? alt.replays_verified > 0 && alt.replays_reproduced == alt.replays_verified
            : alt.replays_reproduced > 0 &&
                  (alt.replays_reproduced > current.replays_reproduced ||
                   (alt.replays_reproduced == current.replays_reproduced && alt.shrunk_size < current.shrunk_size));
    if (better) {
      cx_ = std::move(alt);
      return true;
    }
    cx_ = std::move(current);
    found_origin_answers_ = std::move(current_answers);
    failure_class_ = current_class;
    repeating_ = current_repeating;
    seen_flaky_ = current_flaky;
    return false;
  }

  // The shrink options with the reruns already spent taken off.
  harness::ShrinkOptions Remaining() const {
    harness::ShrinkOptions o = so_;
    o.max_reruns = so_.max_reruns - reruns_;
    o.flaky = seen_flaky_;  // what earlier passes learned
    return o;
  }

  std::shared_ptr<const lang::Spec> spec_;
  const JobOptions& job_;
  const ShrinkJobOptions& options_;
  harness::Counterexample cx_;
  // What the tester answered as the origin in the run that found it: every
  // candidate is answered from it.
  std::vector<harness::OriginAnswerItem> found_origin_answers_;
  std::string failure_class_;  // what a rerun must show to reproduce
  std::chrono::steady_clock::time_point start_;
  harness::ShrinkOptions so_;
  // Stops each rerun's SUT while the next runs, and waits for them all
  // when destroyed (after warm_, declared below, has handed it its SUTs).
  mutable SutReaper reaper_;  // thread-safe; handed to reruns by const OptionsFor
  // With a reset command, or renaming_: running SUTs the reruns reuse
  // (after reaper_, so that it still runs when these are handed to it).
  std::unique_ptr<WarmSuts> warm_;
  // Fresh SUTs launched ahead of the reruns that need one (after reaper_,
  // which stops those nobody took).
  std::unique_ptr<SpareSuts> spares_;
  // Without a reset command, where the spec has a partition: each rerun's
  // requests are renamed to partitions no run touched, and run on a warm
  // SUT (fresh_resources.h); renames_ numbers the renames (parallel
  // candidates build their options at once).
  bool renaming_ = false;
  mutable std::atomic<uint64_t> renames_{0};
  // Per candidate (CandidateKey): its reruns so far, and whether one on a
  // fresh SUT reproduced the failure (Rerun).
  struct CandidateRuns {
    int runs = 0;
    bool fresh_reproduced = false;
  };
  absl::Mutex runs_mu_;
  absl::flat_hash_map<uint64_t, CandidateRuns> runs_of_ ABSL_GUARDED_BY(runs_mu_);
  std::atomic<int> extra_reruns_{0};  // the fresh reruns Rerun added (counted in the job's reruns)
  int reruns_ = 0;
  int reproduced_ = 0;       // reruns of earlier passes that reproduced
  bool repeating_ = false;   // each candidate is sent many times over (RoundsFor)
  int searches_ = 0;         // one-at-a-time runs so far (TryFoundOneAtATime)
  bool seen_flaky_ = false;  // an earlier pass saw a candidate both reproduce and not
};

}  // namespace

absl::StatusOr<harness::Counterexample> MakeCounterexample(std::shared_ptr<const lang::Spec> spec,
                                                           const JobOptions& job, const JobResult& result,
                                                           const ShrinkJobOptions& options) {
  harness::Counterexample cx = AsFound(*spec, job, result);
  if (!options.shrink || job.launch.empty() || !IsSutFault(result.outcome)) return cx;
  FindingShrinker shrinker(std::move(spec), job, options, std::move(cx));
  return shrinker.Run(result);
}

}  // namespace dualswarm::workers
