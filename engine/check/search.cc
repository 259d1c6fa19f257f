#include "engine/check/search.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "engine/check/constraints.h"
#include "engine/check/match.h"

namespace dualswarm::check {
namespace {

using ir::Value;

constexpr size_t kNoClose = SIZE_MAX;
// OwedHash's start, and its value for a channel that owes nothing.
constexpr uint64_t kOwedSeed = 0x6a09e667f3bcc909ull;
constexpr uint64_t kOwesNothing = 0;
constexpr int64_t kNeverOptional = INT64_MAX;
constexpr uint32_t kNoClass = UINT32_MAX;
// Handler runs between two looks at the clock.
constexpr uint64_t kClockPollEvery = 256;

// Whether `conn` occurs in `e` only as the connection a `send` addresses.
bool ConnOnlyAddressesSends(const lang::Expr* e, const std::string& conn) {
  if (e == nullptr) return true;
  if (e->kind == lang::ExprKind::kName && e->name == conn) return false;
  for (size_t i = 0; i < e->args.size(); ++i) {
    const lang::Expr* a = e->args[i].get();
    if (e->kind == lang::ExprKind::kSend && i == 0 && a != nullptr && a->kind == lang::ExprKind::kName) continue;
    if (!ConnOnlyAddressesSends(a, conn)) return false;
  }
  for (const auto& s : e->stmts)
    if ((s.kind != lang::Stmt::Kind::kExpr && s.name == conn) || !ConnOnlyAddressesSends(s.value.get(), conn))
      return false;
  for (const auto& arm : e->arms)
    if (!ConnOnlyAddressesSends(arm.body.get(), conn)) return false;
  return ConnOnlyAddressesSends(e->tail.get(), conn);
}

// True when no handler can tell two connections apart except by where its
// responses go (to a closed connection: nowhere).
bool HandlersIgnoreTheirConnection(const lang::SpecAst& ast) {
  for (const auto& h : ast.handlers)
    if (!ConnOnlyAddressesSends(h.body.get(), h.conn)) return false;
  return true;
}

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void WorkClock::Start() { started_ns_ = MonotonicNs(); }

void WorkClock::Stop() {
  double call = static_cast<double>(MonotonicNs() - started_ns_) / 1e9;
  spent_ += call;
  max_call_ = std::max(max_call_, call);
}

bool WorkClock::Exceeded() const {
  if (max_seconds_ <= 0) return false;
  return spent_ + static_cast<double>(MonotonicNs() - started_ns_) / 1e9 > max_seconds_;
}

Search::Search(std::shared_ptr<const lang::Spec> spec, const CheckerOptions& opts, std::unique_ptr<NetworkModel> model,
               sym::Solver* shared_solver, const WorkClock* clock)
    : spec_(std::move(spec)),
      opts_(opts),
      model_(std::move(model)),
      interp_(spec_.get(), opts.connection_nodes,
              [this](int64_t ch) {
                return ch < static_cast<int64_t>(channel_conn_.size()) ? channel_conn_[static_cast<size_t>(ch)] : -1;
              }),
      solver_(shared_solver),
      clock_(clock),
      interchangeable_requests_(HandlersIgnoreTheirConnection(spec_->ast)),
      may_decline_(model_->MayDeclineLastRequest()),
      has_origin_role_(interp_.HasOriginRole()),
      memo_(opts.max_memo),
      steps_(opts.max_cached_steps, opts.max_cached_step_nodes),
      rng_(opts.seed) {
  cur_.globals = std::make_shared<const std::vector<Value>>(spec_->initial_globals);
  // The probe's closures (crashed_closure.h) know no origin pool: an
  // intermediary's search goes without.
  probe_after_ = has_origin_role_ ? 0 : opts.probe_after_work;
  restart_after_ = opts.restart_after_work;
  restart_back_ = opts_.restart_back_observations;
}

void Search::BecomeProbe(uint64_t max_work) {
  is_probe_ = true;
  max_work_ = max_work;
  probe_after_ = 0;
  restart_after_ = 0;
}

void Search::Append(Observation o, int ch, Origin origin) {
  if (ch >= 0 && static_cast<size_t>(ch) >= log_.per_channel.size()) {
    log_.per_channel.resize(static_cast<size_t>(ch) + 1);
    closed_at_.resize(static_cast<size_t>(ch) + 1, kNoClose);
    answered_.resize(static_cast<size_t>(ch) + 1, 0);
    received_at_.resize(static_cast<size_t>(ch) + 1);
    channel_conn_.resize(static_cast<size_t>(ch) + 1, -1);
    optional_after_.resize(static_cast<size_t>(ch) + 1, kNeverOptional);
    last_request_class_.resize(static_cast<size_t>(ch) + 1, kNoClass);
    settled_name_.resize(static_cast<size_t>(ch) + 1, 0);
    is_origin_.resize(static_cast<size_t>(ch) + 1, 0);
  }
  if (ch >= 0) {
    channel_conn_[static_cast<size_t>(ch)] = o.conn;
    is_origin_[static_cast<size_t>(ch)] = o.side == Side::kOrigin;
  }
  switch (o.kind) {
    case Observation::Kind::kSent: {  // a client's request, or an origin's answer
      if (RepairsOn())
        carriers_.Note(o.msg, ch, static_cast<int32_t>(log_.per_channel[static_cast<size_t>(ch)].size()));
      const bool answer = o.side == Side::kOrigin;
      log_.per_channel[static_cast<size_t>(ch)].push_back(
          {answer ? kOriginLabelBase + o.label : o.label, ch, obs_.size(), seq_++, o.msg,
           answer ? SentRequest::Kind::kOriginAnswer : SentRequest::Kind::kRequest});
      break;
    }
    case Observation::Kind::kReceived:
      ++answered_[static_cast<size_t>(ch)];
      received_at_[static_cast<size_t>(ch)].push_back(obs_.size());
      break;
    case Observation::Kind::kClosed:
      if (ch >= 0) closed_at_[static_cast<size_t>(ch)] = obs_.size();
      break;
    case Observation::Kind::kFault:  // a fault's step, on a connection of its own (checker.cc: AppendFault)
      log_.per_channel[static_cast<size_t>(ch)].push_back(
          {o.label, ch, obs_.size(), seq_++, o.msg, SentRequest::Kind::kFault});
      break;
    case Observation::Kind::kTimeout:
      break;
  }
  obs_.push_back(std::move(o));
  obs_channel_.push_back(ch);
  if (ch >= 0) NoteChannel(static_cast<size_t>(ch));
  for (ChannelsAt& a : channels_at_) a.at_obs = kNoClose;  // what they depend on changed
  closures_.Clear();                                       // and what their versions name
  if (origin == Origin::kTrace) ++st_.observations;
}

void Search::MarkCoveredBranches(std::vector<bool>* covered) const {
  for (const History* h = cur_.history.get(); h != nullptr; h = h->prev.get()) {
    if (h->branches == nullptr) continue;
    for (const int32_t id : *h->branches)
      if (id >= 0 && static_cast<size_t>(id) < covered->size()) (*covered)[static_cast<size_t>(id)] = true;
  }
}

// Brings channel ch's entries in optional_after_, last_request_class_ and
// settled_name_ up to date after an observation on it.
void Search::NoteChannel(size_t ch) {
  settled_name_[ch] = ch;
  if (IsOrigin(ch)) return;  // never optional: its answers may be taken after it closed
  // An intermediary's client requests show on the origin side when taken
  // (what it forwards), so a closed client channel is never optional there.
  if (has_origin_role_) return;
  const auto& requests = log_.per_channel[ch];
  const bool unanswered = static_cast<size_t>(answered_[ch]) < requests.size();
  if (closed_at_[ch] == kNoClose || !unanswered) {
    optional_after_[ch] = kNeverOptional;
  } else {
    const auto& received = received_at_[ch];
    optional_after_[ch] = received.empty() ? -1 : static_cast<int64_t>(received.back());
  }
  if (closed_at_[ch] == kNoClose || requests.empty()) return;
  if (last_request_class_[ch] == kNoClass) last_request_class_[ch] = RequestClass(requests.back().msg);
  if (interchangeable_requests_ && requests.size() - static_cast<size_t>(answered_[ch]) == 1)
    settled_name_[ch] = requests.back().msg.Hash() | (uint64_t{1} << 63);
}

// The class of `msg` among the last requests of closed channels: equal
// requests share one (the messages live in log_, which only grows).
uint32_t Search::RequestClass(const Value& msg) {
  auto& same_hash = request_classes_[msg.Hash()];
  for (const auto& [m, cls] : same_hash)
    if (*m == msg) return cls;
  same_hash.emplace_back(&msg, num_request_classes_);
  return num_request_classes_++;
}

// ---- The memo key ----------------------------------------------------------

// A channel is optional at an observation when the trace shows it closed
// with requests left unanswered and no response on it from that
// observation on (closed before it, or later with nothing received in
// between): nothing the server does with those requests can be seen.
bool Search::IsOptional(size_t ch, size_t at_obs) const { return static_cast<int64_t>(at_obs) > optional_after_[ch]; }

// Whether request `consumed` of channel `ch` is the last one of a channel
// that is optional at `at_obs`, under a network that lets the server leave
// such a request for ever (the dominance rule's case, memo.h).
bool Search::IsLastOfOptional(size_t ch, int32_t consumed, size_t at_obs) const {
  return may_decline_ && IsOptional(ch, at_obs) && static_cast<size_t>(consumed) + 1 == log_.per_channel[ch].size();
}

// Whether a `send` addresses a client's connection of the trace.
bool Search::IsConnection(const Value& conn) const {
  return conn.is_int() && conn.as_int() >= 0 && conn.as_int() < static_cast<int64_t>(log_.per_channel.size()) &&
         !IsOrigin(static_cast<size_t>(conn.as_int()));
}

// An explanation's memo key at `at_obs`: everything that decides what can
// still happen to it there — the state and constraints (its StateHash),
// and per channel the requests consumed and the responses owed (what its
// channels contribute: ChannelKeyOf, or derived: ChildChannelKey). Left
// out, because no future depends on them: the server order that led here,
// the numbering of `fresh` values, channels closed with every request
// answered (consumed = sent in every explanation). An intermediary's
// explanation adds what it has pending with the origin (OriginPending). An optional channel
// with one request left is left out, and one with none left goes to
// `settled` (memo.h: dominance).
MemoKey Search::WithState(ChannelKey channels, size_t at_obs, uint64_t state_hash) {
  return MemoKey{absl::HashOf(at_obs, state_hash, channels.hash), std::move(channels.settled)};
}

// What e's channels (consumed counts, owed responses) contribute to its key
// at at_obs (KeyOf): the sum of each channel's term (ChannelTerm), so that
// a child's key follows from its parent's by the terms of the channels
// the step changed (ChildChannelKey).
Search::ChannelKey Search::ChannelKeyOf(const Explanation& e, size_t at_obs) const {
  ChannelKey k;
  // Per channel that owes something: the hash of what it owes (OwedHash).
  absl::InlinedVector<std::pair<size_t, uint64_t>, 4> owed;
  e.owed.ForEach([&](size_t ch, const Owed& o) {
    auto it = std::find_if(owed.begin(), owed.end(), [&](const auto& x) { return x.first == ch; });
    if (it == owed.end()) it = owed.insert(owed.end(), {ch, kOwedSeed});
    it->second = absl::HashOf(it->second, o.msg.Hash());
  });
  auto owed_on = [&](size_t ch) {
    for (const auto& [c, what] : owed)
      if (c == ch) return what;
    return kOwesNothing;
  };
  const ChannelsAt& a = ChannelsAtObs(at_obs);
  std::vector<uint64_t> settled;
  for (size_t n = 0; n < a.key.size(); ++n) {
    const size_t ch = a.key[n];
    const int32_t c = Consumed(e, ch);
    k.hash += TermOf(ch, a.key_roles[n], c, owed_on(ch));
    if (SettlesAs(ch, a.key_roles[n], c)) settled.push_back(SettledName(ch));
  }
  for (const auto& [ch, what] : owed)  // owed to a client yet to send: a `send` across connections
    if (!InKey(ch, at_obs)) k.hash += TermOf(ch, KeyRole::kOut, 0, what);
  k.hash += e.origin.Hash();
  if (!settled.empty()) {
    std::sort(settled.begin(), settled.end());
    k.settled = std::make_shared<const std::vector<uint64_t>>(std::move(settled));
  }
  return k;
}

// The hash of what e owes on ch, as ChannelKeyOf computes it.
uint64_t Search::OwedHash(const Explanation& e, size_t ch) {
  uint64_t h = kOwesNothing;
  e.owed.ForChannel(ch, [&](const Owed& o) { h = absl::HashOf(h == kOwesNothing ? kOwedSeed : h, o.msg.Hash()); });
  return h;
}

// How channel ch stands in keys at at_obs.
Search::KeyRole Search::RoleOf(size_t ch, size_t at_obs) const {
  if (!InKey(ch, at_obs)) return KeyRole::kOut;
  return IsOptional(ch, at_obs) ? KeyRole::kOptional : KeyRole::kOpen;
}

// What channel ch in `role` contributes to a key when c of its requests
// are consumed and it owes `owed` (an OwedHash); 0 when it is left out.
// Out of the key's channels (no request yet), only what it owes counts.
// An optional channel counts its requests consumed unless at most one is
// left (memo.h: dominance; none left: the channel is in `settled`);
// nothing owed there can be observed. Any other counts both; its 0
// consumed with nothing owed is its only "absent".
uint64_t Search::TermOf(size_t ch, KeyRole role, int32_t c, uint64_t owed) const {
  switch (role) {
    case KeyRole::kOut:
      return owed == kOwesNothing ? 0 : absl::HashOf(1, ch, owed);
    case KeyRole::kOptional:
      if (may_decline_ && static_cast<int64_t>(log_.per_channel[ch].size()) - c <= 1) return 0;
      return absl::HashOf(2, ch, c);
    case KeyRole::kOpen:
      break;
  }
  if (c == 0 && owed == kOwesNothing) return 0;
  return absl::HashOf(3, ch, c, owed);
}

// Whether ch in `role`, with c requests consumed, is in a key's `settled`:
// an optional channel with every request consumed.
bool Search::SettlesAs(size_t ch, KeyRole role, int32_t c) const {
  return may_decline_ && role == KeyRole::kOptional && static_cast<size_t>(c) == log_.per_channel[ch].size();
}

// The ChannelKey of child c, made from `parent` (whose key at at_obs is
// parent_key) by a step that took channel d's request and added no path
// constraint: only d and the channels the step sent to can differ, and
// c's owed responses are the parent's followed by the step's.
Search::ChannelKey Search::ChildChannelKey(const ChannelKey& parent_key, const Explanation& parent,
                                           const Explanation& c, size_t d, size_t at_obs) const {
  ChannelKey k = parent_key;
  absl::InlinedVector<size_t, 4> changed = {d};
  size_t index = 0;
  c.owed.ForEach([&](size_t ch, const Owed&) {
    if (index++ >= parent.owed.Size() && std::find(changed.begin(), changed.end(), ch) == changed.end())
      changed.push_back(ch);
  });
  for (const size_t ch : changed) {
    const KeyRole role = RoleOf(ch, at_obs);
    k.hash += TermOf(ch, role, Consumed(c, ch), OwedHash(c, ch)) -
              TermOf(ch, role, Consumed(parent, ch), OwedHash(parent, ch));
  }
  const KeyRole d_role = RoleOf(d, at_obs);
  if (SettlesAs(d, d_role, Consumed(c, d)) && !SettlesAs(d, d_role, Consumed(parent, d))) {
    const uint64_t name = SettledName(d);
    std::vector<uint64_t> names;
    if (k.settled != nullptr) {
      names.reserve(k.settled->size() + 1);
      names.assign(k.settled->begin(), k.settled->end());
    }
    names.insert(std::upper_bound(names.begin(), names.end(), name), name);
    k.settled = std::make_shared<const std::vector<uint64_t>>(std::move(names));
  }
  return k;
}

// Task t's ChannelKey at at_obs (its frame's observation), computed unless
// it was derived or computed since the last observation was appended
// (which can make a channel optional).
const Search::ChannelKey& Search::KeyOfTask(Task& t, size_t at_obs) const {
  if (!KeyCurrent(t, at_obs)) {
    t.key = ChannelKeyOf(t.e, at_obs);
    t.key_at = at_obs;
    t.key_epoch = obs_.size();
  }
  return t.key;
}

bool Search::KeyCurrent(const Task& t, size_t at_obs) const { return t.key_epoch == obs_.size() && t.key_at == at_obs; }

// Whether task t's explanation was seen at at_obs (inserting its key).
bool Search::Seen(Task& t, size_t at_obs) {
  if (!opts_.use_memo) {
    ++work_;
    return false;
  }
  return Seen(WithState(KeyOfTask(t, at_obs), at_obs, t.e.StateHash()));
}

// Whether the probe's child that step outcome `o` would give task t (taking
// the last request of an optional channel) is in the memo already: then it
// is counted as Seen would count it and never built (most of a probe's
// children are such repeats). Decided only where the child's key is known
// without building it: no path constraints before or after the step, and
// every response sent to a gone client (so its channels are t's).
bool Search::ProbeChildSeen(Task& t, const StepOutcome& o, size_t at_obs) {
  if (!t.e.pc.empty() || !o.added.empty()) return false;
  for (const auto& send : o.sends)
    if (send.to_origin || !IsConnection(send.conn) || closed_at_[static_cast<size_t>(send.conn.as_int())] > at_obs)
      return false;
  if (!memo_.Contains(WithState(KeyOfTask(t, at_obs), at_obs, StateHashOf(*o.globals, {})))) return false;
  ++work_;
  ++st_.memo_hits;
  return true;
}

// The channels a key at `at_obs` depends on: those with a request sent
// before it, less those closed before it with every request answered
// (consumed = sent in every explanation).
const std::vector<size_t>& Search::KeyChannels(size_t at_obs) const { return ChannelsAtObs(at_obs).key; }

// What the search asks of the channels at `at_obs` again and again, kept
// for the last few observations asked (a frame looks up many keys and
// orders many tasks' channels at one observation, and the search goes back
// and forth between a few frames; Append forgets them).
const Search::ChannelsAt& Search::ChannelsAtObs(size_t at_obs) const {
  for (const ChannelsAt& a : channels_at_)
    if (a.at_obs == at_obs) return a;
  ChannelsAt& a = channels_at_[next_channels_at_++ % channels_at_.size()];
  a.Reset(at_obs);
  const bool drop_twins = TwinsDropped();
  for (size_t ch = 0; ch < log_.per_channel.size(); ++ch) {
    if (!InKey(ch, at_obs)) continue;
    a.key.push_back(ch);
    a.key_roles.push_back(IsOptional(ch, at_obs) ? KeyRole::kOptional : KeyRole::kOpen);
    const bool twin =
        drop_twins && IsOptional(ch, at_obs) && log_.per_channel[ch].size() - static_cast<size_t>(answered_[ch]) == 1;
    (twin ? a.twins : a.plain).push_back(static_cast<int>(ch));
  }
  auto class_and_seq = [&](int ch) {
    const auto& requests = log_.per_channel[static_cast<size_t>(ch)];
    return std::make_pair(last_request_class_[static_cast<size_t>(ch)], requests.back().seq);
  };
  std::sort(a.twins.begin(), a.twins.end(), [&](int x, int y) { return class_and_seq(x) < class_and_seq(y); });
  for (size_t k = 1; k <= a.twins.size(); ++k)
    if (k == a.twins.size() || class_and_seq(a.twins[k]).first != class_and_seq(a.twins[k - 1]).first)
      a.twin_group_ends.push_back(k);
  // The probe's crashed requests: of each class, the first (the probe
  // never consumes them), once sent. It and the clients gone grow with
  // at_obs, so their sizes name them.
  size_t begin = 0;
  for (const size_t end : a.twin_group_ends) {
    const int ch = a.twins[begin];
    const SentRequest& last = log_.per_channel[static_cast<size_t>(ch)].back();
    if (last.obs_index < at_obs)
      a.crashed.push_back(
          CrashedRequest{ch, static_cast<int32_t>(log_.per_channel[static_cast<size_t>(ch)].size() - 1), last.label});
    begin = end;
  }
  const size_t gone = static_cast<size_t>(
      std::count_if(closed_at_.begin(), closed_at_.end(), [&](size_t closed) { return closed <= at_obs; }));
  a.crashed_version = (static_cast<uint64_t>(a.crashed.size()) << 32) | gone;
  return a;
}

void Search::ChannelsAt::Reset(size_t obs) {
  at_obs = obs;
  key.clear();
  key_roles.clear();
  plain.clear();
  twins.clear();
  twin_group_ends.clear();
  crashed.clear();
  crashed_version = 0;
}

// The channels a task with explanation e at at_obs may consume from, as
// far as the search can tell without the network model: the key's (the
// others have no request sent yet or every request consumed), less twins.
// Twins: where requests are interchangeable, optional channels whose one
// unanswered request is all they have left and equal give children with
// equal keys (the handler sees an equal request; its responses go
// nowhere), so the memo would drop all but the first child anyway; of each
// class only the channel whose request was sent first and is still to be
// taken is a candidate (docs/checker.md: twin requests). A history with a
// hundred crashed clients has a hundred such channels and a few dozen
// distinct requests.
void Search::CandidateChannels(const Explanation& e, size_t at_obs, bool with_twins, std::vector<int>* out) const {
  const ChannelsAt& a = ChannelsAtObs(at_obs);
  out->assign(a.plain.begin(), a.plain.end());
  if (!with_twins) return;
  size_t begin = 0;
  for (const size_t end : a.twin_group_ends) {
    for (size_t k = begin; k < end; ++k) {
      const size_t ch = static_cast<size_t>(a.twins[k]);
      if (static_cast<size_t>(Consumed(e, ch)) < log_.per_channel[ch].size()) {
        out->push_back(a.twins[k]);
        break;
      }
    }
    begin = end;
  }
}

bool Search::InKey(size_t ch, size_t at_obs) const {
  if (ch >= log_.per_channel.size()) return false;
  const auto& requests = log_.per_channel[ch];
  if (requests.empty() || requests.front().obs_index >= at_obs) return false;
  // An origin channel's answers may be taken after it closed (an abort).
  return closed_at_[ch] >= at_obs || IsOptional(ch, at_obs) || IsOrigin(ch);
}

// Whether the response just owed on `ch` (the last of e.owed's for ch) differs
// from the one the trace already shows there: the explanation would die
// when that observation is explained, so it is dropped now (offline, and
// online within what has arrived, this keeps consume-ahead alternatives
// that cannot work off the work lists). Only a plain mismatch counts;
// constraints are left for the observation itself. A rejection still names
// the furthest observation explanations reached, with the reasons of those
// that died there: an explanation dropped here reached `at_obs`, no further,
// and leaves no reason (so a finding's signature does not depend on which
// later responses had arrived when it was found).
bool Search::OwedContradictsTrace(const Explanation& e, size_t ch, size_t at_obs) {
  const auto& seen = received_at_[ch];
  const size_t matched = static_cast<size_t>(std::lower_bound(seen.begin(), seen.end(), at_obs) - seen.begin());
  const size_t k = matched + e.owed.Count(ch) - 1;
  if (k >= seen.size()) return false;
  const size_t at = seen[k];
  const Owed& o = e.owed.Back(ch);
  std::vector<sym::TermRef> cs;
  if (MatchMessage(o.msg, obs_[at].msg, &cs, nullptr)) return false;
  if (at == at_obs) {  // the response being explained: an ordinary death
    NoteBlocker(at, e, o.msg);
    RecordMismatch(at, e, o.msg, o.loc);
  } else {
    ReachedAt(at_obs);
  }
  return true;
}

// Explanation e died at at_obs: what the spec sent (by the `send` at loc)
// does not match the message observed there. The reason's texts are built
// only when it is kept (most deaths' are not).
void Search::RecordMismatch(size_t at_obs, const Explanation& e, const Value& sent, lang::Loc loc) {
  if (!ReachedAt(at_obs)) return;
  const int mismatched = CountMismatches(sent, obs_[at_obs].msg);
  const int closeness = std::max(1, mismatched);
  if (!WouldKeep({closeness, false, 0})) return;  // even with the shortest order
  std::vector<int64_t> order = e.ServerOrder();
  if (!WouldKeep({closeness, false, order.size()})) return;
  std::vector<sym::TermRef> cs;
  Mismatch mm;
  MatchMessage(sent, obs_[at_obs].msg, &cs, &mm);
  AddReason(DeathReason{absl::StrCat(mm.field, ": ", mm.text), mm.field, std::move(order),
                        lang::FormatLoc(spec_->file, loc), mismatched});
}

bool Search::Seen(MemoKey key) {
  ++work_;
  if (!memo_.SeenOrInsert(std::move(key))) return false;
  ++st_.memo_hits;
  return true;
}

void Search::Enqueue(Frame& f, Task t) {
  f.work.push_back(std::move(t));
  ++frontier_;
  st_.max_frontier_seen = std::max(st_.max_frontier_seen, frontier_);
}

// ---- One frame: explaining one received response ---------------------------

// Produces the next explanation of observation f.obs; false when none is
// left.
absl::StatusOr<bool> Search::NextCandidate(Frame& f, Explanation* out) {
  const int ch = obs_channel_[f.obs];
  const bool from_sut_to_origin = IsOrigin(static_cast<size_t>(ch));
  while (f.head < f.work.size()) {
    if (OnStall() != StallAction::kGoOn) return false;  // a frame can stall the search by itself (Backtrack)
    if (RepairDue(f)) return false;                     // the repair goes first (Backtrack)
    Task t = std::move(f.work[f.head++]);
    --frontier_;
    t.e.EnsureChannels(log_.per_channel.size());
    if (from_sut_to_origin) {
      absl::StatusOr<bool> matched = ExplainOriginRequest(f, t, out);
      if (!matched.ok()) return matched.status();
      if (*matched) {
        Compact(f);
        return true;
      }
    } else if (!t.e.owed.Empty(static_cast<size_t>(ch))) {
      if (!MatchOwed(f, std::move(t.e), out)) continue;
      Compact(f);
      return true;
    } else if (absl::Status s = ConsumeOne(f, t); !s.ok()) {
      return s;
    }
    absl::Status s = CheckBounds(obs_[f.obs]);
    if (!s.ok()) return s;
  }
  Compact(f);
  return false;
}

// The response's channel owes something: its head must match.
bool Search::MatchOwed(const Frame& f, Explanation e, Explanation* out) {
  const size_t ch = static_cast<size_t>(obs_channel_[f.obs]);
  ++st_.explanations;
  const Owed& head = e.owed.Front(ch);
  std::vector<sym::TermRef> cs;
  if (!MatchMessage(head.msg, obs_[f.obs].msg, &cs, nullptr)) {
    NoteBlocker(f.obs, e, head.msg);
    RecordMismatch(f.obs, e, head.msg, head.loc);
    return false;
  }
  const lang::Loc where = head.loc;
  Explanation c = std::move(e);
  c.owed.PopFront(ch);
  std::string why;
  if (!Constrain(solver_, &c, cs, &why)) {
    // A death names the server order, which Constrain keeps.
    if (ReachedAt(f.obs)) RecordDeath(f.obs, c, why, "", lang::FormatLoc(spec_->file, where));
    return false;
  }
  DropUnreachableConstraints(&c);
  *out = std::move(c);
  return true;
}

// Observation f.obs is a request the intermediary sent on an origin
// channel. Task t's alternatives, tried lazily in this order (t goes back
// on the work list while it has some left): each message in its origin
// pool that may be this request (one per distinct message and tag), then
// taking one more input, since the request may come from a step not taken
// yet even when the pool holds messages (docs/checker.md: intermediaries).
// True with *out when a pool message matched.
absl::StatusOr<bool> Search::ExplainOriginRequest(Frame& f, Task& t, Explanation* out) {
  if (t.channels == nullptr) {  // the task's first visit: fix its alternatives
    auto alternatives = std::make_shared<std::vector<int>>();
    const OriginPending& pending = t.e.origin;
    absl::flat_hash_map<uint64_t, absl::InlinedVector<size_t, 1>> by_hash;  // entries offered, by hash
    for (size_t j = 0; j < pending.PoolSize(); ++j) {
      const PoolEntry& x = pending.PoolAt(j);
      auto& same_hash = by_hash[absl::HashOf(x.msg.Hash(), x.tag.Hash())];
      if (std::any_of(same_hash.begin(), same_hash.end(),
                      [&](size_t k) { return pending.PoolAt(k).msg == x.msg && pending.PoolAt(k).tag == x.tag; }))
        continue;  // an equal entry is offered: interchangeable
      same_hash.push_back(j);
      alternatives->push_back(PoolAlternative(j));
    }
    std::vector<int> cons;
    CandidateChannels(t.e, f.obs, true, &candidates_);
    model_->Consumable(log_, t.e.consumed, f.obs, candidates_, &cons);
    OrderChannels(-1, t.e, f.obs, &cons);
    alternatives->insert(alternatives->end(), cons.begin(), cons.end());
    if (alternatives->empty()) {
      RecordDeath(f.obs, t.e,
                  "the spec's server has nothing pending for the origin (no request it has taken sends a message "
                  "there that is still to be seen) and no input left to take",
                  "", "");
      return false;
    }
    t.channels = std::move(alternatives);
  }
  const std::vector<int>& alternatives = *t.channels;
  while (t.next_k < alternatives.size()) {
    const int a = alternatives[t.next_k++];
    if (a < 0) {
      if (!MatchPool(f, t.e, PoolIndex(a), out)) continue;
      if (t.next_k < alternatives.size()) Enqueue(f, std::move(t));
      return true;
    }
    if (absl::StatusOr<bool> added = EnqueueChildren(f, t, a, false); !added.ok()) return added.status();
    break;
  }
  if (t.next_k < alternatives.size()) Enqueue(f, std::move(t));
  return false;
}

// Pool message j of e is the request observation f.obs shows on its
// origin channel: the channel's tag queue gets its tag, and the match's
// constraints must hold.
bool Search::MatchPool(const Frame& f, const Explanation& e, size_t j, Explanation* out) {
  ++st_.explanations;
  const PoolEntry& entry = e.origin.PoolAt(j);
  std::vector<sym::TermRef> cs;
  if (!MatchMessage(entry.msg, obs_[f.obs].msg, &cs, nullptr)) {
    RecordMismatch(f.obs, e, entry.msg, entry.loc);
    return false;
  }
  Explanation c = e;
  const PoolEntry taken = c.origin.Match(j, static_cast<size_t>(obs_channel_[f.obs]));
  std::string why;
  if (!Constrain(solver_, &c, cs, &why)) {
    if (ReachedAt(f.obs)) RecordDeath(f.obs, c, why, "", lang::FormatLoc(spec_->file, taken.loc));
    return false;
  }
  DropUnreachableConstraints(&c);
  *out = std::move(c);
  return true;
}

// The response's channel owes nothing yet: the server takes one more
// request, from the task's next channel in order (lazily: the task goes
// back on the list for its remaining channels).
absl::Status Search::ConsumeOne(Frame& f, Task& t) {
  if (t.channels == nullptr) {  // the task's first visit: fix its channel order
    bool crashed_covered = t.from_closure;
    if (!crashed_covered && is_probe_ && TwinsDropped() && t.e.pc.empty()) {
      absl::StatusOr<bool> added = AddClosureChildren(f, t);
      if (!added.ok()) return added.status();
      crashed_covered = *added;
    }
    auto cons = std::make_shared<std::vector<int>>();
    CandidateChannels(t.e, f.obs, !crashed_covered, &candidates_);
    model_->Consumable(log_, t.e.consumed, f.obs, candidates_, cons.get());
    if (cons->empty()) {
      RecordDeath(f.obs, t.e, NoResponseReason(t.e), "", "");
      return absl::OkStatus();
    }
    OrderChannels(obs_channel_[f.obs], t.e, f.obs, cons.get());
    t.channels = std::move(cons);
  }
  const std::vector<int>& cons = *t.channels;
  while (t.next_k < cons.size()) {
    const int d = cons[t.next_k++];
    const bool optional_last =
        opts_.use_memo && IsLastOfOptional(static_cast<size_t>(d), t.e.consumed[static_cast<size_t>(d)], f.obs);
    const bool same_channels = is_probe_ && optional_last;  // the probe leaves d's request to be taken again
    absl::StatusOr<bool> added_any = EnqueueChildren(f, t, d, same_channels);
    if (!added_any.ok()) return added_any.status();
    const bool added = *added_any;
    // A crashed client's request that gave nothing new hands the task
    // straight to its next channel: a task with many such requests would
    // otherwise go round the work list once per request. (Only the order
    // of the work changes.) In the exact search only when it left no child
    // at all (an inert step, or children that died): when its children
    // were seen before, putting the task back lets the work list take
    // explanations that used fewer crashed requests first, which the
    // dominance rule prunes with (n pending puts: n^2 children instead of
    // thousands). A probe keys no crashed requests: no dominance to keep.
    if (added || !optional_last || (!is_probe_ && !children_.empty())) break;
  }
  if (t.next_k < cons.size()) Enqueue(f, std::move(t));
  return absl::OkStatus();
}

// Why explanation e cannot give the response being explained: its server
// took every request it may take so far and owes nothing on the response's
// connection. An intermediary's explanation that has requests out with the
// origin says so: the response could only follow an origin answer (a cache
// answering from a store the spec says it no longer holds reads this way).
std::string Search::NoResponseReason(const Explanation& e) const {
  std::string why =
      "the spec's server produced no response on this connection for the requests it has taken (it sends nothing "
      "there)";
  size_t out_with_origin = e.origin.PoolSize();
  e.origin.ForEachTag([&](size_t, const Value&) { ++out_with_origin; });
  if (out_with_origin > 0)
    absl::StrAppend(&why, "; ", out_with_origin, out_with_origin == 1 ? " request" : " requests",
                    " it sent the origin ", out_with_origin == 1 ? "awaits" : "await",
                    " an answer, so a response here could only follow one");
  return why;
}

// Takes channel d's next input from task t's explanation (Expand) and puts
// the children the memo has not seen on f's work list, in branch order;
// whether it put any.
absl::StatusOr<bool> Search::EnqueueChildren(Frame& f, Task& t, int d, bool probe_child) {
  children_.clear();
  if (absl::Status s = Expand(t, d, f.obs, &children_, probe_child); !s.ok()) return s;
  OrderChildren(&children_);
  bool added = false;
  for (auto& c : children_) {
    if (Seen(c, f.obs)) continue;
    Enqueue(f, std::move(c));
    added = true;
  }
  return added;
}

// In a probe: makes every state of the closure of t's state under the
// crashed requests (crashed_closure.h) a child of t, which then leaves
// those requests out of its own channels, as do the children; false when
// the closure does not apply (t takes them one at a time). A child the memo
// holds is counted as Seen would count it and not built.
absl::StatusOr<bool> Search::AddClosureChildren(Frame& f, Task& t) {
  const ChannelsAt& a = ChannelsAtObs(f.obs);
  if (a.crashed.empty()) return true;
  const size_t at_obs = f.obs;
  auto step = [&](const CrashedClosures::Globals& globals, int64_t next_fresh, const CrashedRequest& r) {
    Explanation from;
    from.globals = globals;
    from.next_fresh = next_fresh;
    return StepFrom(from, r.channel, r.index);
  };
  auto gone = [&](const Value& conn) {
    return IsConnection(conn) && closed_at_[static_cast<size_t>(conn.as_int())] <= at_obs;
  };
  absl::StatusOr<const std::vector<ClosureState>*> closure =
      closures_.Of(t.e.globals, t.e.next_fresh, a.crashed, a.crashed_version, step, gone);
  if (!closure.ok()) return closure.status();
  if (*closure == nullptr) return false;
  st_.closure_states += (**closure).size();
  for (const ClosureState& state : **closure) {
    if (memo_.Contains(WithState(KeyOfTask(t, at_obs), at_obs, StateHashOf(*state.globals, {})))) {
      ++work_;
      ++st_.memo_hits;
      continue;
    }
    Task child{t.e};
    child.e.globals = state.globals;
    child.e.next_fresh = state.next_fresh;
    for (const int64_t label : state.labels)
      child.e.history = std::make_shared<const History>(History{label, child.e.history, at_obs, nullptr});
    child.from_closure = true;
    child.key = t.key;  // its channels are t's
    child.key_at = t.key_at;
    child.key_epoch = t.key_epoch;
    if (!Seen(child, at_obs)) Enqueue(f, std::move(child));
  }
  return true;
}

// The outcomes of the step that takes request `index` of channel d from
// p's state (whose constraints it cannot see: StepIgnoresConstraints):
// looked up in the step cache, or
// run (and kept there while the cache is active).
absl::StatusOr<std::shared_ptr<const StepOutcomes>> Search::StepFrom(const Explanation& p, int d, int32_t index) {
  const bool cacheable = opts_.use_step_cache && steps_.Active();
  if (cacheable) {
    if (std::shared_ptr<const StepOutcomes> cached = steps_.Find(p.globals, d, index, p.next_fresh)) {
      if (++st_.steps_reused % kClockPollEvery == 0)
        if (absl::Status s = PollTimeAndCancel(); !s.ok()) return s;
      return cached;
    }
  }
  auto ran = std::make_shared<StepOutcomes>();
  if (absl::Status s = RunStep(p, d, Sent(RequestRef{d, index}), ran.get()); !s.ok()) return s;
  if (cacheable) {
    for (StepOutcome& o : *ran) o.globals = steps_.Intern(std::move(o.globals));
    steps_.Insert(p.globals, d, index, p.next_fresh, ran);
  }
  return ran;
}

// ResourceExhausted once the checker is cancelled or past its time bound.
absl::Status Search::PollTimeAndCancel() const {
  if (opts_.cancel != nullptr && opts_.cancel->load())
    return absl::ResourceExhaustedError("interrupted while checking");
  if (clock_->Exceeded())
    return absl::ResourceExhaustedError(
        absl::StrCat("time bound exceeded: the checker spent more than ", clock_->max_seconds(),
                     " s (raise it: dualswarm check --max-seconds, dualswarm test --max-check-seconds)"));
  return absl::OkStatus();
}

// Runs the server step that consumes channel d's next request from t's
// explanation in every possible way (or looks it up: step_cache.h);
// appends the surviving explanations as tasks, with their keys where they
// follow from t's (AddChild). `probe_child`: in a probe, d's request is one
// the probe leaves to be taken again, and children it has seen are left
// out (ProbeChildSeen).
absl::Status Search::Expand(Task& t, int d, size_t at_obs, std::vector<Task>* out, bool probe_child) {
  const Explanation& p = t.e;
  const int32_t index = p.consumed[static_cast<size_t>(d)];
  const SentRequest& r = Sent(RequestRef{d, index});
  std::shared_ptr<const StepOutcomes> cached;  // held here whatever the cache does with it
  const StepOutcomes* outcomes = nullptr;
  // An origin answer's step depends on its tag too, which the step
  // cache's key leaves out.
  if (opts_.use_step_cache && StepIgnoresConstraints(p) && steps_.Active() && !IsOrigin(static_cast<size_t>(d))) {
    absl::StatusOr<std::shared_ptr<const StepOutcomes>> found = StepFrom(p, d, index);
    if (!found.ok()) return found.status();
    cached = *std::move(found);
    outcomes = cached.get();
  } else {  // not kept: the scratch list saves its allocations
    step_scratch_.clear();
    absl::Status s = RunStep(p, d, r, &step_scratch_);
    if (!s.ok()) return s;
    outcomes = &step_scratch_;
  }
  const bool last_of_optional = opts_.use_memo && IsLastOfOptional(static_cast<size_t>(d), index, at_obs);
  for (const StepOutcome& o : *outcomes) {
    if (last_of_optional && Inert(o, at_obs)) {
      ++st_.inert_steps_skipped;
      continue;
    }
    if (probe_child && ProbeChildSeen(t, o, at_obs)) continue;
    if (absl::Status s = AddChild(t, d, at_obs, r, o, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Whether a step from p comes out as it would without p's path
// constraints (so the step cache may serve it): p has none, or its globals
// are concrete. A step then sees no variable of p's constraints — its
// request is concrete and its own `fresh` variables are new (named by the
// step, or numbered from p's counter) — so each of its solver queries asks
// whether p's constraints, satisfiable, and the step's, over other
// variables, hold together: exactly when the step's hold alone. (A cache
// spec's response owes an Age, a `fresh` string with a bound, until the
// response binds it; every other step would otherwise be run again.)
bool Search::StepIgnoresConstraints(const Explanation& p) {
  if (p.pc.empty()) return true;
  for (const Value& v : *p.globals)
    if (!v.IsConcrete()) return false;
  return true;
}

// Whether a step changes nothing a later observation could see: the state
// and constraints stay as they were and every response goes to a client
// that is gone. Taking such a step as the last request of an optional
// channel only gives up the choice of taking it later, so the child is
// dominated by its parent, which the search explores anyway
// (docs/checker.md: inert steps).
bool Search::Inert(const StepOutcome& o, size_t at_obs) const {
  if (!o.keeps_state) return false;
  for (const auto& send : o.sends) {
    if (send.to_origin || !IsConnection(send.conn)) return false;  // AddChild reports the spec error
    if (closed_at_[static_cast<size_t>(send.conn.as_int())] > at_obs) return false;
  }
  return true;
}

// Runs the handler on request `r` from `p`'s state along every path; keeps
// the paths that survive.
absl::Status Search::RunStep(const Explanation& p, int d, const SentRequest& r, StepOutcomes* outcomes) {
  // Outside a probe each request is taken once per explanation, so its
  // step numbers its own variables (docs/checker.md: the memo).
  std::optional<PathOracle::Step> step;
  if (!is_probe_)
    step = r.label >= kOriginLabelBase ? PathOracle::Step{true, r.label - kOriginLabelBase}
                                       : PathOracle::Step{false, r.label};
  PathOracle oracle(
      solver_, &p.pc, p.next_fresh, [this] { return PollTimeAndCancel(); }, step);
  lang::StepOutput so;
  std::vector<int32_t> taken;
  if (opts_.record_coverage) so.branches = &taken;
  const Value conn = Value::Int(d);
  do {
    oracle.Restart();
    ++st_.handler_runs;
    if (opts_.max_steps && st_.handler_runs > opts_.max_steps)
      return absl::ResourceExhaustedError(
          absl::StrCat("step bound exceeded (", opts_.max_steps, " spec steps); raise --max-steps"));
    if (st_.handler_runs % kClockPollEvery == 0)
      if (absl::Status s = PollTimeAndCancel(); !s.ok()) return s;
    absl::Status s;
    switch (r.kind) {
      case SentRequest::Kind::kRequest:
        s = interp_.RunHandler(*p.globals, r.msg, conn, &oracle, &so);
        break;
      case SentRequest::Kind::kFault:
        s = RunFaultStep(*p.globals, r.msg, conn, &oracle, &so);
        break;
      case SentRequest::Kind::kOriginAnswer:
        // Its request was matched, and its tag queued, at an earlier frame.
        if (!p.origin.HasTag(static_cast<size_t>(d)))
          return absl::InternalError(absl::StrCat("origin answer label ", r.label - kOriginLabelBase,
                                                  " is taken before its request was seen"));
        s = interp_.RunOriginHandler(*p.globals, r.msg, p.origin.FrontTag(static_cast<size_t>(d)), &oracle, &so);
        break;
    }
    if (!s.ok()) return s;
    if (so.killed || oracle.dead()) continue;
    StepOutcome o;
    o.keeps_state = so.globals == *p.globals && oracle.added().empty();
    o.globals = o.keeps_state ? p.globals : std::make_shared<const std::vector<Value>>(std::move(so.globals));
    o.sends = std::move(so.sends);
    o.added = oracle.added();
    o.next_fresh = oracle.next_fresh();
    if (!taken.empty()) {
      std::sort(taken.begin(), taken.end());
      taken.erase(std::unique(taken.begin(), taken.end()), taken.end());
      o.branches = std::make_shared<const std::vector<int32_t>>(taken);
    }
    outcomes->push_back(std::move(o));
  } while (oracle.NextPath());
  return absl::OkStatus();
}

// A fault's step: the `on fault` handler on the event's fields, answered on
// the fault's own connection by the event itself (which the trace shows
// there: checker.cc), so the step is taken by the time of the event.
absl::Status Search::RunFaultStep(const std::vector<Value>& globals, const Value& fault, const Value& conn,
                                  lang::Oracle* oracle, lang::StepOutput* out) const {
  absl::Status s = interp_.RunFaultHandler(globals, fault, oracle, out);
  if (!s.ok()) return s;
  out->sends.push_back(lang::SendRecord{conn, fault, spec_->ast.fault_handlers.at(0).loc});
  return absl::OkStatus();
}

// The explanation one handler path leads to, unless its constraints fail;
// with its key when that follows from the parent's (no constraint added).
absl::Status Search::AddChild(const Task& parent, int d, size_t at_obs, const SentRequest& r, const StepOutcome& step,
                              std::vector<Task>* out) {
  const Explanation& p = parent.e;
  Explanation c;
  c.globals = step.globals;
  c.pc = p.pc;
  c.consumed = p.consumed;
  c.owed = p.owed;
  c.origin = p.origin;
  c.EnsureChannels(log_.per_channel.size());
  bool touches_origin = IsOrigin(static_cast<size_t>(d));
  if (touches_origin) c.origin.PopTag(static_cast<size_t>(d));
  // A probe takes a crashed client's request and leaves it to be taken again.
  if (!is_probe_ || !IsLastOfOptional(static_cast<size_t>(d), p.consumed[static_cast<size_t>(d)], at_obs))
    c.consumed.Increment(static_cast<size_t>(d));
  c.next_fresh = step.next_fresh;
  c.history = std::make_shared<const History>(History{r.label, p.history, at_obs, step.branches});
  for (const auto& send : step.sends) {
    if (send.to_origin) {
      c.origin.AddToPool({send.msg, send.conn, r.label, send.loc});
      touches_origin = true;
      continue;
    }
    if (!IsConnection(send.conn))
      return absl::FailedPreconditionError(
          lang::FormatDiag(spec_->file, send.loc,
                           absl::StrCat("`send` to ", send.conn.ToString(),
                                        ", which is not a connection (use the name bound by `from`)")));
    const size_t ch = static_cast<size_t>(send.conn.as_int());
    if (closed_at_[ch] <= at_obs) continue;  // the client is gone
    c.owed.Push(ch, {send.msg, r.label, send.loc});
    if (OwedContradictsTrace(c, ch, at_obs)) return absl::OkStatus();
  }
  std::string why;
  if (!Constrain(solver_, &c, step.added, &why)) return absl::OkStatus();
  DropUnreachableConstraints(&c);
  Task child{std::move(c)};
  // A step that touched the origin pool or tags gets its key computed in
  // full (KeyOfTask), not derived.
  if (opts_.use_memo && step.added.empty() && KeyCurrent(parent, at_obs) && !touches_origin) {
    child.key = ChildChannelKey(parent.key, p, child.e, static_cast<size_t>(d), at_obs);
    child.key_at = at_obs;
    child.key_epoch = obs_.size();
    if (opts_.verify_memo_keys) {
      const ChannelKey full = ChannelKeyOf(child.e, at_obs);
      if (full.hash != child.key.hash || !SameNames(full.settled, child.key.settled))
        return absl::InternalError(absl::StrCat("a memo key derived from its parent's differs from the one computed (",
                                                "observation ", at_obs, ", channel ", d, ")"));
    }
  }
  out->push_back(std::move(child));
  return absl::OkStatus();
}

// The response's own channel first; the others by the age of their next
// request (oldest first: a server tends to serve requests in the order they
// arrive), reversed or shuffled by the branch order. The random order is
// drawn from the explanation and the observation, never from a running
// generator, so it does not depend on what was explored before.
void Search::OrderChannels(int own_ch, const Explanation& e, size_t obs_index, std::vector<int>* cons) const {
  auto own = std::find(cons->begin(), cons->end(), own_ch);
  if (own != cons->end()) std::rotate(cons->begin(), own, own + 1);
  auto rest = cons->begin() + (own != cons->end() ? 1 : 0);
  // Channels whose requests may stay unanswered for ever (a crashed
  // client's) after those whose responses are still to come: the server
  // must take the latter some time, the former maybe never. Sorted by a
  // key computed once per channel (sequence numbers stay below 2^63).
  order_keys_.clear();
  for (auto it = rest; it != cons->end(); ++it) {
    const size_t c = static_cast<size_t>(*it);
    const uint64_t seq = Sent(RequestRef{*it, e.consumed[c]}).seq;
    order_keys_.emplace_back(IsOptional(c, obs_index) ? seq | (uint64_t{1} << 63) : seq, *it);
  }
  std::sort(order_keys_.begin(), order_keys_.end());
  for (size_t k = 0; k < order_keys_.size(); ++k) rest[static_cast<std::ptrdiff_t>(k)] = order_keys_[k].second;
  switch (opts_.branch_order) {
    case BranchOrder::kLast:
      std::reverse(rest, cons->end());
      break;
    case BranchOrder::kRandom: {
      std::mt19937_64 visit_rng(opts_.seed ^ (e.StateHash() * 0x9e3779b97f4a7c15ull) ^ obs_index);
      std::shuffle(rest, cons->end(), visit_rng);
      break;
    }
    default:
      break;
  }
}

void Search::OrderChildren(std::vector<Task>* children) {
  switch (opts_.branch_order) {
    case BranchOrder::kLast:
      std::reverse(children->begin(), children->end());
      break;
    case BranchOrder::kRandom:
      std::shuffle(children->begin(), children->end(), rng_);
      break;
    case BranchOrder::kMostConstrained:
      std::stable_sort(children->begin(), children->end(),
                       [](const Task& a, const Task& b) { return a.e.pc.size() > b.e.pc.size(); });
      break;
    case BranchOrder::kFirst:
      break;
  }
}

// Keeps why an explanation of observation `at_obs` died, if that is the
// furthest observation reached so far. Cheap when it is not kept.
void Search::RecordDeath(size_t at_obs, const Explanation& e, std::string text, std::string field,
                         std::string spec_loc) {
  if (!ReachedAt(at_obs)) return;
  std::vector<int64_t> order = e.ServerOrder();
  if (!WouldKeep({1, spec_loc.empty(), order.size()})) return;
  AddReason(DeathReason{std::move(text), std::move(field), std::move(order), std::move(spec_loc)});
}

// Notes that an explanation reached at_obs (a rejection names the furthest
// observation any reached, with the reasons of those that died there);
// whether a death there as close as one field would be kept as a reason.
bool Search::ReachedAt(size_t at_obs) {
  if (at_obs > furthest_) {
    furthest_ = at_obs;
    verdict_.reasons.clear();
  }
  return at_obs == furthest_ && WouldKeep({1, false, 0});
}

// Whether a reason of that rank (ReasonRank) would be kept: there is room,
// or a kept one ranks after it.
bool Search::WouldKeep(const ReasonRankKey& rank) const {
  if (static_cast<int>(verdict_.reasons.size()) < opts_.max_reasons) return true;
  return std::any_of(verdict_.reasons.begin(), verdict_.reasons.end(),
                     [&](const DeathReason& x) { return ReasonRank(x) > rank; });
}

// Keeps `r` among the rejection's reasons unless one with the same text and
// server order is there. When max_reasons are kept, r drops the one ranked
// last (ReasonRank; the last found of those) if it ranks before it.
void Search::AddReason(DeathReason r) {
  if (opts_.max_reasons <= 0) return;
  for (const auto& x : verdict_.reasons)
    if (x.text == r.text && x.server_order == r.server_order) return;
  if (static_cast<int>(verdict_.reasons.size()) < opts_.max_reasons) {
    verdict_.reasons.push_back(std::move(r));
    return;
  }
  auto worst = verdict_.reasons.begin();
  for (auto it = verdict_.reasons.begin(); it != verdict_.reasons.end(); ++it)
    if (ReasonRank(*it) >= ReasonRank(*worst)) worst = it;
  if (ReasonRank(r) >= ReasonRank(*worst)) return;
  verdict_.reasons.erase(worst);  // the rest stay in the order they were found
  verdict_.reasons.push_back(std::move(r));
}

absl::Status Search::CheckBounds(const Observation& o) const {
  if (max_work_ && work_ > max_work_)
    return absl::ResourceExhaustedError(absl::StrCat("probe budget exceeded (", max_work_, " memo lookups)"));
  if (frontier_ > opts_.max_frontier)
    return absl::ResourceExhaustedError(
        absl::StrCat("frontier bound exceeded: more than ", opts_.max_frontier,
                     " live explanations while explaining response label ", o.label,
                     o.line ? absl::StrCat(" (trace line ", o.line, ")") : "",  // online observations have no line
                     "; raise --max-frontier (memory grows with it)"));
  return absl::OkStatus();
}

void Search::Compact(Frame& f) {
  if (f.head == f.work.size()) {
    f.work = {};  // emptied: its memory goes back
    f.head = 0;
  } else if (f.head > 64 && f.head * 2 > f.work.size()) {
    f.work.erase(f.work.begin(), f.work.begin() + static_cast<std::ptrdiff_t>(f.head));
    f.head = 0;
  }
}

// ---- The depth-first search over frames -----------------------------------

// A closed connection: the client can no longer receive what is owed there.
void Search::PassClosed(size_t i) {
  const int ch = obs_channel_[i];
  if (ch < 0) return;
  cur_.EnsureChannels(log_.per_channel.size());
  cur_.owed.Clear(static_cast<size_t>(ch));
}

void Search::PushFrame(Frame f) {
  f.max_obs_so_far = stack_.empty() ? f.obs : std::max(f.obs, stack_.back().max_obs_so_far);
  stack_.push_back(std::move(f));
}

// Opens the frame for received observation i with cur_ as its only task and
// takes its first candidate; false when there is none (or cur_ was seen).
bool Search::Enter(size_t i) {
  const uint64_t mark = memo_.Mark();  // before cur_'s own key: a restart here forgets it too
  Task entry{cur_};
  if (Seen(entry, i)) return false;
  PushFrame(Frame{i, {}, 0, cur_, mark, obs_.size()});
  Enqueue(stack_.back(), std::move(entry));
  Explanation cand;
  auto found = NextCandidate(stack_.back(), &cand);
  if (!found.ok()) {
    Fail(found.status());
    return false;
  }
  if (!*found) return false;
  cur_ = std::move(cand);
  next_obs_ = i + 1;
  return true;
}

// Resumes the most recent frame with an alternative; false when the search
// space is exhausted.
absl::StatusOr<bool> Search::Backtrack() {
  while (!stack_.empty()) {
    if (ProbeDue()) {
      auto rejected = ProbeRejects();
      if (!rejected.ok()) return rejected.status();
      if (*rejected) return false;
    }
    if (const StallAction a = OnStall(); a != StallAction::kGoOn) {
      if (a == StallAction::kPause) {
        paused_ = true;
        resume_at_ = obs_.size() + std::max<size_t>(16, 4 * log_.per_channel.size());
      } else if (a == StallAction::kYield) {
        yielded_ = true;
        ++st_.yields;
      } else {
        Restart();
      }
      return true;
    }
    Frame& top = stack_.back();
    Explanation cand;
    auto found = NextCandidate(top, &cand);
    if (!found.ok()) return found.status();
    if (*found) {
      ++st_.backtracks;
      cur_ = std::move(cand);
      next_obs_ = top.obs + 1;
      return true;
    }
    if (OnStall() != StallAction::kGoOn) continue;  // stopped short, not exhausted: see above
    const bool exhausted = top.head == top.work.size();
    if (RepairsOn() && top.obs == repair_reach_) {
      auto repaired = RepairByProvenance(top);
      if (!repaired.ok()) return repaired.status();
      if (*repaired) continue;  // its frame is on top now
    }
    if (!exhausted) continue;  // stopped short for a repair that did not happen: go on
    stack_.pop_back();
  }
  return false;
}

void Search::Advance() {
  work_at_call_ = work_;
  if (paused_) {
    if (!final_ && obs_.size() < resume_at_) return;
    paused_ = false;
    Restart();
  }
  if (yielded_) {  // the last call stopped while backtracking: go on with it
    yielded_ = false;
    auto again = Backtrack();
    if (!again.ok()) return Fail(again.status());
    if (!*again) return Reject();
  }
  while (verdict_.kind == Verdict::Kind::kAccept && next_obs_ < obs_.size() && !paused_ && !yielded_) {
    NoteProgress();
    repair_reach_ = std::max(repair_reach_, next_obs_);
    const size_t i = next_obs_;
    switch (obs_[i].kind) {
      case Observation::Kind::kSent:
      case Observation::Kind::kTimeout:
      case Observation::Kind::kFault:
        ++next_obs_;
        continue;
      case Observation::Kind::kClosed:
        PassClosed(i);
        ++next_obs_;
        continue;
      case Observation::Kind::kReceived:
        break;
    }
    if (Enter(i)) continue;
    if (verdict_.kind != Verdict::Kind::kAccept) return;
    auto again = Backtrack();
    if (!again.ok()) return Fail(again.status());
    if (!*again) return Reject();
  }
}

void Search::Finish() {
  final_ = true;
  Advance();
}

// ---- Restarts ----------------------------------------------------------------

// Online, a frame is entered knowing only the observations up to its own,
// so it cannot drop the alternatives later responses contradict
// (OwedContradictsTrace) and the search may explore them all, one
// observation at a time, at exponential cost. A restart discards the
// frames from some point up and enters them again knowing every
// observation so far, as offline. A restart re-explores; it never skips:
// the discarded frames' memo keys are forgotten with them, so the new
// frames explore everything the old ones had yet to (docs/checker.md:
// restarts).

// The frame a restart begins at: the oldest within restart_back_
// observations of the furthest explained.
// (Frames are in observation order but for provenance repair's, which sit
// above frames of later observations; a restart discards those too: it
// begins at the first frame at or after `from`, found by the frames'
// running maximum of observations, which is in order.)
size_t Search::RestartFrame() const {
  const size_t from = deepest_ > restart_back_ ? deepest_ - restart_back_ : 0;
  auto it = std::lower_bound(stack_.begin(), stack_.end(), from,
                             [](const Frame& f, size_t obs) { return f.max_obs_so_far < obs; });
  return static_cast<size_t>(it - stack_.begin());
}

// What to do about a stall: nothing while the search gets further or has
// worked less than restart_after_ since; else, online, stop until more of
// the trace arrives (defer_when_stalled); else restart, if the frame a
// restart would begin at was entered knowing fewer observations than there
// are now (else it would only repeat itself).
Search::StallAction Search::OnStall() const {
  if (restart_after_ != 0 && work_ - work_at_progress_ >= restart_after_ && !stack_.empty()) {
    if (opts_.defer_when_stalled && !final_) return StallAction::kPause;
    const size_t fi = std::min(RestartFrame(), stack_.size() - 1);
    if (stack_[fi].known_obs < obs_.size()) return StallAction::kRestart;
  }
  // Online, one call has done its share: the next goes on from here.
  if (opts_.defer_when_stalled && !final_ && !is_probe_ && opts_.yield_after_work != 0 &&
      work_ - work_at_call_ >= opts_.yield_after_work)
    return StallAction::kYield;
  return StallAction::kGoOn;
}

void Search::Restart() {
  if (stack_.empty()) return;
  ++st_.restarts;
  const size_t fi = std::min(RestartFrame(), stack_.size() - 1);
  Frame& f = stack_[fi];
  memo_.ForgetSince(f.memo_mark);
  cur_ = std::move(f.entry);
  next_obs_ = f.obs;
  for (size_t k = fi; k < stack_.size(); ++k) frontier_ -= stack_[k].work.size() - stack_[k].head;
  repair_reach_ = f.obs;
  stack_.resize(fi);
  work_at_progress_ = work_;
  restart_after_ *= 2;
  restart_back_ *= 2;
}

// ---- Provenance repair ---------------------------------------------------------

// How many frames one stuck observation may have repaired (search.h).
constexpr size_t kMaxRepairTries = 16;
// How far back along an explanation's history the repair looks.
constexpr size_t kMaxRepairHistory = 4096;

// Opens the next repair frame for frame f, which has run dry, if any is
// left to try; true when it did (it is on top of the stack). First where
// the requests that blocked the observed value were taken (NoteBlocker),
// then at each frame since the value's carrier was sent, the newest first.
absl::StatusOr<bool> Search::RepairByProvenance(Frame& f) {
  while (f.repair_tries < kMaxRepairTries && !f.blocked_at.empty()) {
    const RepairHint hint = f.blocked_at.front();
    f.blocked_at.erase(f.blocked_at.begin());
    ++f.repair_tries;
    auto pushed = PushRepairFrame(hint.at_obs, hint.carrier);
    if (!pushed.ok() || *pushed) return pushed;
  }
  if (f.head < f.work.size()) return false;  // not dry yet: only the hints go before its own work
  const size_t stuck_obs = f.obs;
  for (const RequestRef& ref : carriers_.CarriersOf(obs_[stuck_obs].msg)) {
    const SentRequest& r = Sent(ref);
    if (r.obs_index >= stuck_obs) continue;
    const std::vector<size_t> frames = FramesThatTookRequestsBefore(f.entry, r, ref.index);
    while (f.repair_tries < kMaxRepairTries && f.next_repair_frame < frames.size()) {
      ++f.repair_tries;
      auto pushed = PushRepairFrame(frames[f.next_repair_frame++], ref);  // f is stack_.back(): it moves
      if (!pushed.ok() || *pushed) return pushed;
    }
    break;  // one carrier is enough to go by
  }
  return false;
}

// Explanation e could not explain observation at_obs, the one the newest
// frame explains: the spec answered `expected` where the trace shows
// another value. When a request alone carried a value of `expected` (the
// blocker: what a queue held before the observed item), and e took it
// after the request to move was sent, the frame's repair first tries
// taking that request at the frame where e took the blocker. The request
// to move is the one that alone carried the observed value; when the
// response shows no carried value (a dequeue that found the queue empty),
// the response's own request (taken before the blocker, it finds it not
// yet there).
void Search::NoteBlocker(size_t at_obs, const Explanation& e, const Value& expected) {
  if (!RepairsOn() || stack_.empty() || stack_.back().obs != at_obs) return;
  std::vector<RepairHint>& hints = stack_.back().blocked_at;
  if (hints.size() >= kMaxRepairTries) return;
  // No blocker without a value only one request carried (most deaths in
  // register and kv histories, whose values are one character).
  const std::vector<RequestRef> blockers = carriers_.CarriersOf(expected);
  if (blockers.empty()) return;
  std::vector<RequestRef> to_move = carriers_.CarriersOf(obs_[at_obs].msg);
  if (to_move.empty()) {
    std::optional<RequestRef> own = RequestAnsweredAt(at_obs);
    if (own) to_move.push_back(*own);
  }
  if (to_move.size() != 1) return;
  const size_t sent_at = Sent(to_move[0]).obs_index;
  for (const RequestRef& b : blockers) {
    if (b == to_move[0]) continue;
    const int64_t blocker = Sent(b).label;
    size_t looked = 0;
    for (const History* h = e.history.get(); h != nullptr && h->at_obs > sent_at && looked < kMaxRepairHistory;
         h = h->prev.get(), ++looked) {
      if (h->label != blocker) continue;
      const RepairHint hint{h->at_obs, to_move[0]};
      if (std::find(hints.begin(), hints.end(), hint) == hints.end()) hints.push_back(hint);
      break;
    }
  }
}

// The request whose response observation at_obs is: responses on a
// channel come in the order of its requests.
std::optional<RequestRef> Search::RequestAnsweredAt(size_t at_obs) const {
  const int ch = obs_channel_[at_obs];
  if (ch < 0) return std::nullopt;
  const auto& received = received_at_[static_cast<size_t>(ch)];
  const size_t k = static_cast<size_t>(std::lower_bound(received.begin(), received.end(), at_obs) - received.begin());
  if (k >= log_.per_channel[static_cast<size_t>(ch)].size()) return std::nullopt;
  return RequestRef{ch, static_cast<int32_t>(k)};
}

// Whether frame f, not yet dry, should let its repair go first: it
// explains the furthest observation and a dying explanation named where
// the blocking request was taken (NoteBlocker). Enumerating the rest of
// the frame first can take every subset of the requests in flight.
bool Search::RepairDue(const Frame& f) const {
  return RepairsOn() && f.obs == repair_reach_ && !f.blocked_at.empty() && f.repair_tries < kMaxRepairTries;
}

// The observations whose frames took, in explanation e, requests after r
// was sent and before e took r (or, when e has not taken r, at all): the
// newest first, each once.
std::vector<size_t> Search::FramesThatTookRequestsBefore(const Explanation& e, const SentRequest& r,
                                                         int32_t r_index) const {
  std::vector<size_t> frames;
  bool past_r =
      static_cast<size_t>(r.channel) >= e.consumed.size() || e.consumed[static_cast<size_t>(r.channel)] <= r_index;
  size_t looked = 0;
  for (const History* h = e.history.get(); h != nullptr && looked < kMaxRepairHistory; h = h->prev.get(), ++looked) {
    if (!past_r) {
      past_r = h->label == r.label;
      continue;
    }
    if (h->at_obs <= r.obs_index) break;
    if (frames.empty() || frames.back() != h->at_obs) frames.push_back(h->at_obs);
  }
  return frames;
}

// Opens a frame at observation `at_obs` whose work is the explanations the
// newest frame there was entered with, having taken r first; false when r
// is not next on its channel there, or every such explanation was seen.
absl::StatusOr<bool> Search::PushRepairFrame(size_t at_obs, RequestRef r) {
  auto f = std::find_if(stack_.rbegin(), stack_.rend(), [&](const Frame& x) { return x.obs == at_obs; });
  if (f == stack_.rend()) return false;
  Explanation base = f->entry;
  base.EnsureChannels(log_.per_channel.size());
  if (base.consumed[static_cast<size_t>(r.ch)] != r.index) return false;
  const std::vector<size_t>& key = KeyChannels(at_obs);  // every channel with a request to take: sync's rule
  std::vector<int> consumable;
  model_->Consumable(log_, base.consumed, at_obs, std::vector<int>(key.begin(), key.end()), &consumable);
  if (std::find(consumable.begin(), consumable.end(), r.ch) == consumable.end()) return false;
  Task base_task{std::move(base)};
  std::vector<Task> children;
  if (absl::Status s = Expand(base_task, r.ch, at_obs, &children, false); !s.ok()) return s;
  OrderChildren(&children);
  const uint64_t mark = memo_.Mark();
  // Entered with r taken, when that is all it can be: a later repair at
  // this observation then moves another request ahead of both.
  Frame repair{at_obs, {}, 0, children.size() == 1 ? children[0].e : std::move(base_task.e), mark, obs_.size()};
  for (auto& c : children)
    if (!Seen(c, at_obs)) Enqueue(repair, std::move(c));
  if (repair.work.empty()) return false;
  ++st_.repairs;
  PushFrame(std::move(repair));
  return true;
}

// ---- The crashed-request probe ---------------------------------------------

void Search::NoteProgress() {
  if (next_obs_ <= deepest_) return;
  restart_after_ = opts_.restart_after_work;
  restart_back_ = opts_.restart_back_observations;
  deepest_ = next_obs_;
  work_at_deepest_ = work_;
  work_at_progress_ = work_;
  incomparable_at_deepest_ = memo_.incomparable_inserts();
}

// Whether the search has worked long enough without getting further, with
// at least one in 8 of the keys it took up meanwhile incomparable to
// another of the same state (sets of crashed requests used: what the probe
// removes; where the stall has another cause, e.g. many requests in flight,
// the probe would only repeat the work), and the observations are not all
// ones the last probe explained already.
bool Search::ProbeDue() const {
  if (!opts_.use_memo || probe_after_ == 0 || obs_.size() <= probe_accepted_) return false;
  const uint64_t stalled = work_ - work_at_deepest_;
  if (stalled < probe_after_) return false;
  return opts_.probe_any_stall || 8 * (memo_.incomparable_inserts() - incomparable_at_deepest_) >= stalled;
}

// Runs the probe over every observation so far; true when it rejects, and
// then the search ends here with the probe's rejection. Its budget grows
// with the trace and with each probe, as does the work before the next.
absl::StatusOr<bool> Search::ProbeRejects() {
  ++st_.probes;
  auto model = MakeNetworkModel(model_->name());
  if (!model.ok()) return model.status();
  Search probe(spec_, opts_, std::move(*model), solver_, clock_);
  probe.BecomeProbe(4 * probe_after_ + 200 * obs_.size());
  for (size_t i = 0; i < obs_.size(); ++i) probe.Append(obs_[i], obs_channel_[i]);
  probe.Advance();
  st_.handler_runs += probe.st_.handler_runs;
  st_.steps_reused += probe.st_.steps_reused;
  st_.closure_states += probe.st_.closure_states;
  work_at_deepest_ = work_;
  probe_after_ *= 2;
  switch (probe.verdict_.kind) {
    case Verdict::Kind::kAccept:
      probe_accepted_ = obs_.size();
      return false;
    case Verdict::Kind::kInconclusive:  // its budget, or the checker's time
      if (absl::Status s = PollTimeAndCancel(); !s.ok()) return s;
      return false;
    case Verdict::Kind::kSpecError:  // maybe only in what the probe adds
      return false;
    case Verdict::Kind::kReject:
      break;
  }
  ++st_.probe_rejections;
  AdoptReasons(probe.verdict_);
  stack_.clear();
  frontier_ = 0;
  return true;
}

// The probe's rejection names an observation no explanation gets past;
// its reasons are kept where their server order takes each request once
// (an execution the exact search also knows).
void Search::AdoptReasons(const Verdict& probe_verdict) {
  if (probe_verdict.obs_index != furthest_) verdict_.reasons.clear();
  furthest_ = probe_verdict.obs_index;
  for (const DeathReason& r : probe_verdict.reasons) {
    absl::flat_hash_set<int64_t> labels(r.server_order.begin(), r.server_order.end());
    if (labels.size() == r.server_order.size()) AddReason(r);
  }
}

void Search::Reject() {
  verdict_.kind = Verdict::Kind::kReject;
  std::stable_sort(verdict_.reasons.begin(), verdict_.reasons.end(),
                   [](const DeathReason& a, const DeathReason& b) { return ReasonRank(a) < ReasonRank(b); });
  verdict_.obs_index = furthest_;
  verdict_.observation = obs_[furthest_];
  const Observation& r = obs_[furthest_];
  const bool origin = r.side == Side::kOrigin;
  verdict_.message = absl::StrCat("no execution of spec '", spec_->name, "' under the ", model_->name(),
                                  " network explains ", origin ? "request label " : "response label ", r.label,
                                  origin ? " the SUT sent on origin conn " : " on conn ", r.conn,
                                  r.line ? absl::StrCat(" (trace line ", r.line, ")") : "");
}

void Search::Fail(const absl::Status& s) {
  verdict_.kind = absl::IsResourceExhausted(s) ? Verdict::Kind::kInconclusive : Verdict::Kind::kSpecError;
  verdict_.message = std::string(s.message());
  verdict_.reasons.clear();
}

}  // namespace dualswarm::check
