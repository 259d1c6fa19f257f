// Search: the explanation search over one partition of a trace — an
// incremental depth-first search with just-in-time linearization and a memo
// of every (observation, explanation) it has taken up (memo.h).
//
// Observations are appended one at a time; Advance() explains as many as it
// can. A `received` observation opens a frame whose work list holds the
// explanations that may still explain it; taking one either matches the
// response its channel owes, or lets the server consume one more request
// (each handler path a new explanation) and puts the rest back. A frame that
// runs dry is popped and the search resumes the frame below (backtracking).
// Every explanation put on a work list is first looked up in the memo, so
// no explanation is explored twice at the same observation, whatever server
// order led to it. docs/checker.md explains why this never changes a
// verdict.
//
// When the search works long without explaining a further observation, it
// runs a probe: a second search over the same observations in which the
// last request of a closed, unanswered channel (a crashed client's request)
// may be taken any number of times. The probe explains everything the exact
// search explains, so when it rejects, the exact search would too; and it
// needs no record of which such requests an explanation has used, which is
// what makes rejecting histories with many crashed clients expensive.
//
// Provenance repair: when an explanation dies at the furthest observation
// because the spec answered a value one request alone carried (the
// blocker: the item a queue held first) while the trace shows another
// carried value, the server most likely took the observed value's carrier
// too late. The search then opens, on top of its stack, a frame at the
// observation where the blocker was taken, whose work is taking the
// carrier there first; a response with no carried value (an empty queue)
// moves its own request instead. When the frame runs dry without such a
// hint, it tries each frame since the carrier was sent, the newest first.
// The other alternatives stay where they were, so only the order of the
// search changes, never what it explores (docs/checker.md: provenance
// repair).
//
// Online, one Advance call does a bounded slice of work (a number of memo
// lookups) and the next call goes on exactly where it stopped, so one
// observation never holds the tester up for long (docs/checker.md:
// slicing).
#ifndef DUALSWARM_ENGINE_CHECK_SEARCH_H_
#define DUALSWARM_ENGINE_CHECK_SEARCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/check/carriers.h"
#include "engine/check/checker.h"
#include "engine/check/crashed_closure.h"
#include "engine/check/explanation.h"
#include "engine/check/memo.h"
#include "engine/check/network.h"
#include "engine/check/path_oracle.h"
#include "engine/check/step_cache.h"
#include "engine/lang/interp.h"

namespace dualswarm::check {

// Wall time the checker may spend in total (all partitions, all Observe
// calls). Shared by the partitions' searches.
class WorkClock {
 public:
  explicit WorkClock(double max_seconds) : max_seconds_(max_seconds) {}
  void Start();           // an Observe call begins
  void Stop();            // it ends
  bool Exceeded() const;  // polled while a call runs
  double spent_seconds() const { return spent_; }
  double max_call_seconds() const { return max_call_; }
  double max_seconds() const { return max_seconds_; }

 private:
  double max_seconds_;   // 0 = unlimited
  double spent_ = 0;     // in finished calls
  double max_call_ = 0;  // the longest call
  int64_t started_ns_ = 0;
};

class Search {
 public:
  Search(std::shared_ptr<const lang::Spec> spec, const CheckerOptions& opts, std::unique_ptr<NetworkModel> model,
         sym::Solver* shared_solver, const WorkClock* clock);
  Search(const Search&) = delete;  // its interpreter points back at it
  Search& operator=(const Search&) = delete;

  // Records observation `o` on channel `ch` (-1 when it has none). An
  // observation the checker made up (a fault step's answer and close,
  // checker.cc: AppendFault) is not counted in stats().observations.
  enum class Origin { kTrace, kMadeUp };
  void Append(Observation o, int ch, Origin origin = Origin::kTrace);
  // Explains the observations appended so far, as far as possible; sets
  // verdict() when they cannot all be explained or a bound is hit. With
  // CheckerOptions::defer_when_stalled it may stop short (restarts, below).
  void Advance();
  // No observation will follow: explains every one.
  void Finish();
  // Makes this search the probe (see above): crashed requests are taken
  // any number of times, and past `max_work` memo lookups it stops
  // (kInconclusive). Call before the first Append.
  void BecomeProbe(uint64_t max_work);

  const Verdict& verdict() const { return verdict_; }
  const CheckerStats& stats() const { return st_; }
  size_t frontier() const { return frontier_; }
  size_t memo_size() const { return memo_.size(); }
  // The explanation the search follows now (the generator reads its state).
  const Explanation& current() const { return cur_; }
  // Marks in `covered` (indexed by branch id) the branches the steps of
  // current() took (CheckerOptions::record_coverage).
  void MarkCoveredBranches(std::vector<bool>* covered) const;

 private:
  // What an explanation's channels contribute to its memo key (KeyOf):
  // everything but the state and the observation.
  struct ChannelKey {
    uint64_t hash = 0;     // the sum of the channels' terms (ChannelTerm)
    SettledNames settled;  // memo.h
  };
  struct Task {
    Explanation e;
    // The channels it may consume from, in the order tried (OrderChannels);
    // set on its first visit. In a frame explaining a request on an origin
    // channel, the origin pool's messages come first (PoolAlternative).
    std::shared_ptr<const std::vector<int>> channels;
    size_t next_k = 0;  // index into `channels`
    // e's ChannelKey at observation key_at, when it was computed or derived
    // with key_epoch observations appended (KeyOfTask).
    ChannelKey key;
    size_t key_at = SIZE_MAX;
    size_t key_epoch = SIZE_MAX;
    // In a probe: made from its parent's crashed-request closure, which
    // covers its own (AddClosureChildren).
    bool from_closure = false;
  };
  // Provenance repair: take `carrier` first at the frame of `at_obs`.
  struct RepairHint {
    size_t at_obs;
    RequestRef carrier;
    friend bool operator==(const RepairHint& a, const RepairHint& b) {
      return a.at_obs == b.at_obs && a.carrier == b.carrier;
    }
  };
  struct Frame {
    size_t obs;  // the received observation it explains
    std::vector<Task> work;
    size_t head = 0;  // work[head..] is still to do
    // What a restart from this frame needs: the explanation it was entered
    // with, the memo before that, and how many observations were known.
    Explanation entry;
    uint64_t memo_mark = 0;
    size_t known_obs = 0;
    size_t max_obs_so_far = 0;  // of it and the frames below (PushFrame)
    // Its provenance repair, once it runs dry: what to try first, and how
    // many tries it has made.
    std::vector<RepairHint> blocked_at;
    size_t repair_tries = 0;
    size_t next_repair_frame = 0;  // into FramesThatTookRequestsBefore(entry, ...)
  };

  ChannelKey ChannelKeyOf(const Explanation& e, size_t at_obs) const;
  static MemoKey WithState(ChannelKey channels, size_t at_obs, uint64_t state_hash);
  static uint64_t OwedHash(const Explanation& e, size_t ch);
  static int32_t Consumed(const Explanation& e, size_t ch) { return e.consumed.Of(ch); }
  enum class KeyRole : uint8_t { kOut, kOptional, kOpen };
  KeyRole RoleOf(size_t ch, size_t at_obs) const;
  uint64_t TermOf(size_t ch, KeyRole role, int32_t c, uint64_t owed) const;
  bool SettlesAs(size_t ch, KeyRole role, int32_t c) const;
  ChannelKey ChildChannelKey(const ChannelKey& parent_key, const Explanation& parent, const Explanation& c, size_t d,
                             size_t at_obs) const;
  const ChannelKey& KeyOfTask(Task& t, size_t at_obs) const;
  bool KeyCurrent(const Task& t, size_t at_obs) const;
  bool ProbeChildSeen(Task& t, const StepOutcome& o, size_t at_obs);
  // Per observation: the channels keys depend on (KeyChannels), and the
  // candidates for consuming (CandidateChannels): `plain` ones, and
  // `twins` sorted by (request class, send order), each class's group
  // ending at the next twin_group_ends entry.
  struct ChannelsAt {
    size_t at_obs = SIZE_MAX;
    std::vector<size_t> key;
    std::vector<KeyRole> key_roles;  // of each of `key`
    std::vector<int> plain;
    std::vector<int> twins;
    std::vector<size_t> twin_group_ends;
    // The probe's crashed requests (one per class) and what names them
    // and the clients gone at at_obs (CrashedClosures::Of).
    std::vector<CrashedRequest> crashed;
    uint64_t crashed_version = 0;
    void Reset(size_t obs);  // empty, for obs, keeping the lists' capacity
  };
  const ChannelsAt& ChannelsAtObs(size_t at_obs) const;
  const std::vector<size_t>& KeyChannels(size_t at_obs) const;
  void CandidateChannels(const Explanation& e, size_t at_obs, bool with_twins, std::vector<int>* out) const;
  absl::StatusOr<bool> AddClosureChildren(Frame& f, Task& t);
  static bool StepIgnoresConstraints(const Explanation& p);
  absl::StatusOr<std::shared_ptr<const StepOutcomes>> StepFrom(const Explanation& p, int d, int32_t index);
  bool TwinsDropped() const { return opts_.use_memo && interchangeable_requests_ && may_decline_; }
  bool InKey(size_t ch, size_t at_obs) const;
  bool IsOptional(size_t ch, size_t at_obs) const;
  bool IsLastOfOptional(size_t ch, int32_t consumed, size_t at_obs) const;
  bool IsConnection(const ir::Value& conn) const;
  // Whether ch is an origin channel (an intermediary's connection to the
  // tester playing the origin): its inputs are the origin's answers.
  bool IsOrigin(size_t ch) const { return ch < is_origin_.size() && is_origin_[ch]; }
  uint64_t SettledName(size_t ch) const { return settled_name_[ch]; }
  void NoteChannel(size_t ch);
  uint32_t RequestClass(const ir::Value& msg);
  bool Seen(Task& t, size_t at_obs);
  bool Seen(MemoKey key);
  bool OwedContradictsTrace(const Explanation& e, size_t ch, size_t at_obs);
  void Enqueue(Frame& f, Task t);

  absl::StatusOr<bool> NextCandidate(Frame& f, Explanation* out);
  bool MatchOwed(const Frame& f, Explanation e, Explanation* out);
  absl::StatusOr<bool> ExplainOriginRequest(Frame& f, Task& t, Explanation* out);
  // In an origin frame's Task::channels, pool message j is alternative -1-j.
  static int PoolAlternative(size_t j) { return -1 - static_cast<int>(j); }
  static size_t PoolIndex(int alternative) { return static_cast<size_t>(-1 - alternative); }
  bool MatchPool(const Frame& f, const Explanation& e, size_t j, Explanation* out);
  std::string NoResponseReason(const Explanation& e) const;
  absl::Status ConsumeOne(Frame& f, Task& t);  // puts t back on f.work while it has channels left
  absl::StatusOr<bool> EnqueueChildren(Frame& f, Task& t, int d, bool probe_child);
  absl::Status PollTimeAndCancel() const;
  absl::Status Expand(Task& t, int d, size_t at_obs, std::vector<Task>* out, bool probe_child);
  bool Inert(const StepOutcome& o, size_t at_obs) const;
  absl::Status RunStep(const Explanation& p, int d, const SentRequest& r, StepOutcomes* outcomes);
  absl::Status AddChild(const Task& parent, int d, size_t at_obs, const SentRequest& r, const StepOutcome& step,
                        std::vector<Task>* out);
  void OrderChannels(int own_ch, const Explanation& e, size_t obs_index, std::vector<int>* cons) const;
  void OrderChildren(std::vector<Task>* children);
  void RecordDeath(size_t at_obs, const Explanation& e, std::string text, std::string field, std::string spec_loc);
  void RecordMismatch(size_t at_obs, const Explanation& e, const ir::Value& sent, lang::Loc loc);
  absl::Status RunFaultStep(const std::vector<ir::Value>& globals, const ir::Value& fault, const ir::Value& conn,
                            lang::Oracle* oracle, lang::StepOutput* out) const;
  bool ReachedAt(size_t at_obs);
  bool WouldKeep(const ReasonRankKey& rank) const;
  void AddReason(DeathReason r);
  absl::Status CheckBounds(const Observation& o) const;

  void PassClosed(size_t i);
  void PushFrame(Frame f);
  bool Enter(size_t i);
  absl::StatusOr<bool> Backtrack();
  void NoteProgress();
  bool ProbeDue() const;
  enum class StallAction { kGoOn, kPause, kRestart, kYield };
  StallAction OnStall() const;
  size_t RestartFrame() const;
  void Restart();
  // Without the memo a repair frame's work would be explored twice (by it
  // and by the frame it copies from), so repairs need the memo.
  bool RepairsOn() const { return opts_.repair_by_provenance && opts_.use_memo; }
  absl::StatusOr<bool> RepairByProvenance(Frame& f);
  bool RepairDue(const Frame& f) const;
  std::optional<RequestRef> RequestAnsweredAt(size_t at_obs) const;
  // The request `ref` names in the log.
  const SentRequest& Sent(RequestRef ref) const {
    return log_.per_channel[static_cast<size_t>(ref.ch)][static_cast<size_t>(ref.index)];
  }
  void NoteBlocker(size_t at_obs, const Explanation& e, const ir::Value& expected);
  std::vector<size_t> FramesThatTookRequestsBefore(const Explanation& e, const SentRequest& r, int32_t r_index) const;
  absl::StatusOr<bool> PushRepairFrame(size_t at_obs, RequestRef r);
  absl::StatusOr<bool> ProbeRejects();
  void AdoptReasons(const Verdict& probe_verdict);
  void Reject();
  void Fail(const absl::Status& s);
  void Compact(Frame& f);

  std::shared_ptr<const lang::Spec> spec_;
  CheckerOptions opts_;
  std::unique_ptr<NetworkModel> model_;
  lang::Interpreter interp_;
  sym::Solver* solver_;     // shared by all partitions
  const WorkClock* clock_;  // shared by all partitions
  // The handlers use their connection only to address `send`s, so equal
  // requests on different closed connections are interchangeable.
  bool interchangeable_requests_;
  // The network lets the server leave a channel's last request for ever
  // (NetworkModel::MayDeclineLastRequest): what dominance needs.
  bool may_decline_;
  bool has_origin_role_;  // an intermediary's spec (no probe: see the constructor)

  // The trace so far (this partition's part of it) and what it implies.
  std::vector<Observation> obs_;
  std::vector<int> obs_channel_;  // channel of each observation (-1 none)
  SentLog log_;
  std::vector<size_t> closed_at_;                 // per channel; SIZE_MAX while open
  std::vector<int64_t> channel_conn_;             // per channel: the trace's connection (for node_of)
  std::vector<int32_t> answered_;                 // per channel: responses received
  std::vector<std::vector<size_t>> received_at_;  // per channel: its received observations
  // Per channel, what the hot loops (keys, channel orders) ask of it again
  // and again, kept up to date by Append (NoteChannel):
  // IsOptional(ch, at) is at > optional_after_[ch] (kNeverOptional while
  // the channel is open or has every request answered);
  std::vector<int64_t> optional_after_;
  // of a closed channel, the class of its last request among the closed
  // channels' last requests (equal requests, equal class; kNoClass: none);
  // and how it appears in a key's settled set once exhausted (SettledName):
  // by the hash of its one unanswered request where requests on different
  // connections are interchangeable (equal requests, equal futures), else
  // by its channel id.
  std::vector<uint32_t> last_request_class_;
  std::vector<uint64_t> settled_name_;
  std::vector<uint8_t> is_origin_;  // per channel: IsOrigin
  absl::flat_hash_map<uint64_t, std::vector<std::pair<const ir::Value*, uint32_t>>> request_classes_;
  uint32_t num_request_classes_ = 0;
  // Scratch for OrderChannels (no allocation per task): sort keys.
  mutable std::vector<std::pair<uint64_t, int>> order_keys_;
  uint64_t seq_ = 0;

  // Search state.
  Explanation cur_;
  size_t next_obs_ = 0;
  std::vector<Frame> stack_;
  ExplanationMemo memo_;
  mutable std::array<ChannelsAt, 4> channels_at_;  // ChannelsAtObs(at_obs) for the last few asked
  mutable size_t next_channels_at_ = 0;            // the one to replace next
  std::vector<int> candidates_;                    // ConsumeOne's, kept for its capacity
  StepCache steps_;
  CrashedClosures closures_;    // the probe's (AddClosureChildren)
  StepOutcomes step_scratch_;   // the outcomes of a step that is not cached
  std::vector<Task> children_;  // ConsumeOne's, kept for their capacity
  size_t frontier_ = 0;
  Verdict verdict_;
  size_t furthest_ = 0;
  CheckerStats st_;
  // The probe. `work_` counts memo lookups (every explanation taken up or
  // dropped as seen): the unit of the probe's trigger and budget.
  bool is_probe_ = false;  // this search is a probe
  uint64_t max_work_ = 0;  // a probe's budget (0 = none)
  uint64_t work_ = 0;
  size_t deepest_ = 0;  // the furthest observation explained yet
  uint64_t work_at_deepest_ = 0;
  uint64_t incomparable_at_deepest_ = 0;
  uint64_t probe_after_ = 0;   // stalled work that triggers the next probe
  size_t probe_accepted_ = 0;  // observations the last probe explained
  // Restarts: the stalled work that triggers the next, and how many
  // observations back from the furthest it starts (both double with each
  // restart that gets no further; progress resets them).
  uint64_t restart_after_ = 0;
  size_t restart_back_ = 0;
  uint64_t work_at_progress_ = 0;  // work_ when deepest_ last grew or the last restart began (probes leave it)
  // Deferring (CheckerOptions::defer_when_stalled): stopped until the
  // trace has `resume_at_` observations or is final.
  bool paused_ = false;
  size_t resume_at_ = 0;
  // Slicing (CheckerOptions::yield_after_work): work_ when this Advance
  // call began, and whether the last one stopped short while backtracking
  // (the next goes on backtracking where it stopped).
  uint64_t work_at_call_ = 0;
  bool yielded_ = false;
  // Provenance repair: who carried each value, and the furthest observation
  // reached since the start or the last restart (the frames it repairs).
  ValueCarriers carriers_;
  size_t repair_reach_ = 0;
  bool final_ = false;  // Finish() was called: no observation will follow
  std::mt19937_64 rng_;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_SEARCH_H_
