#include "engine/check/checker.h"

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"

namespace dualswarm::check {
namespace {

using ir::Value;
using sym::TermRef;

struct Owed {
  Value msg;        // what the spec's server sent (may be symbolic)
  int64_t label;    // label of the request whose step produced it
  lang::Loc loc;    // the `send`
};

struct History {
  int64_t label;
  std::shared_ptr<const History> prev;
};

// One way the server may have behaved so far.
struct Explanation {
  std::shared_ptr<const std::vector<Value>> globals;
  std::vector<TermRef> pc;              // residual constraints, each mentions a variable
  std::vector<int32_t> consumed;        // per channel
  std::vector<std::vector<Owed>> owed;  // per channel, FIFO
  int64_t next_fresh = 0;
  std::shared_ptr<const History> history;

  void EnsureChannels(size_t n) {
    if (consumed.size() < n) consumed.resize(n, 0);
    if (owed.size() < n) owed.resize(n);
  }

  uint64_t Hash() const {
    uint64_t h = 0x51ed270b27e5f6f5ull;
    for (const auto& g : *globals) h = absl::HashOf(h, g.Hash());
    std::vector<uint64_t> pch;
    pch.reserve(pc.size());
    for (const auto& c : pc) pch.push_back(c->hash);
    std::sort(pch.begin(), pch.end());
    h = absl::HashOf(h, pch);
    size_t n = std::max(consumed.size(), owed.size());
    for (size_t i = 0; i < n; ++i) {
      int32_t k = i < consumed.size() ? consumed[i] : 0;
      bool has_owed = i < owed.size() && !owed[i].empty();
      if (k == 0 && !has_owed) continue;
      h = absl::HashOf(h, i, k);
      if (has_owed)
        for (const auto& o : owed[i]) h = absl::HashOf(h, o.msg.Hash());
    }
    return h;
  }

  // The last `limit` request labels in the order the server took them.
  std::vector<int64_t> ServerOrder(size_t limit = 64) const {
    std::vector<int64_t> out;
    for (const History* p = history.get(); p && out.size() < limit; p = p->prev.get())
      out.push_back(p->label);
    std::reverse(out.begin(), out.end());
    return out;
  }
};

// Enumerates the paths of one handler invocation by replaying it with
// successive choice vectors (stateless search), consulting the solver at
// symbolic branches.
class PathOracle : public lang::Oracle {
 public:
  PathOracle(sym::Solver* solver, const std::vector<TermRef>* base_pc, int64_t next_fresh)
      : solver_(solver), base_pc_(base_pc), base_fresh_(next_fresh) {}

  void Restart() {
    pos_ = 0;
    added_.clear();
    pc_ = *base_pc_;
    next_fresh_ = base_fresh_;
    dead_ = false;
  }
  // Advances to the next unexplored choice vector; false when all are done.
  bool NextPath() {
    choices_.resize(pos_);
    arity_.resize(pos_);
    while (!choices_.empty() && choices_.back() + 1 >= arity_.back()) {
      choices_.pop_back();
      arity_.pop_back();
    }
    if (choices_.empty()) return false;
    ++choices_.back();
    return true;
  }

  int Choose(int n, lang::Loc) override {
    if (pos_ < choices_.size()) return choices_[pos_++];
    choices_.push_back(0);
    arity_.push_back(n);
    ++pos_;
    return 0;
  }
  Value Fresh(sym::Sort sort, lang::Loc loc) override {
    return Value::Sym(sym::MkVar(sort, next_fresh_++, absl::StrCat("fresh@", loc.line, ":", loc.col)));
  }
  bool Decide(const TermRef& c, lang::Loc) override {
    bool can_true = solver_->MaybeSat(pc_, c);
    TermRef nc = sym::MkNot(c);
    bool can_false = solver_->MaybeSat(pc_, nc);
    if (can_true && can_false) {
      bool take = Choose(2, {}) == 0;
      Add(take ? c : nc);
      return take;
    }
    if (!can_true && !can_false) dead_ = true;  // only if the base was unsat
    return can_true;
  }
  bool Assume(const TermRef& c, lang::Loc) override {
    if (!solver_->MaybeSat(pc_, c)) return false;
    Add(c);
    return true;
  }
  bool Possible(const TermRef& c) override { return solver_->MaybeSat(pc_, c); }

  const std::vector<TermRef>& added() const { return added_; }
  int64_t next_fresh() const { return next_fresh_; }
  bool dead() const { return dead_; }

 private:
  void Add(const TermRef& c) {
    added_.push_back(c);
    pc_.push_back(c);
  }
  sym::Solver* solver_;
  const std::vector<TermRef>* base_pc_;
  int64_t base_fresh_;
  std::vector<int> choices_, arity_;
  size_t pos_ = 0;
  std::vector<TermRef> added_, pc_;
  int64_t next_fresh_ = 0;
  bool dead_ = false;
};

struct Mismatch {
  std::string field;
  std::string text;
};

std::string Short(const Value& v) {
  std::string s = ir::ToJson(v);
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

bool IsAbsentMarker(const Value& v) { return v.is_option() && !v.has_value(); }

// Matches a spec message against an observed one. Fields the spec does not
// mention are ignored; a field whose spec value is `none` must be absent;
// `some(v)` means v. Symbolic leaves turn into equality constraints.
bool MatchMessage(const Value& spec, const Value& obs, const std::string& path,
                  std::vector<TermRef>* cs, Mismatch* mm) {
  auto fail = [&](std::string text) {
    mm->field = path.empty() ? "(message)" : path;
    mm->text = std::move(text);
    return false;
  };
  switch (spec.kind()) {
    case Value::Kind::kOption:
      if (!spec.has_value()) {
        if (obs.is_null()) return true;
        return fail(absl::StrCat("spec expects nothing (none), observed ", Short(obs)));
      }
      return MatchMessage(spec.inner(), obs, path, cs, mm);
    case Value::Kind::kSym: {
      const TermRef& t = spec.as_term();
      auto os = obs.scalar_sort();
      if (!os || obs.is_sym() || *os != t->sort)
        return fail(absl::StrCat("spec expects a ", sym::SortName(t->sort), " (", sym::TermToString(t),
                                 "), observed ", Short(obs)));
      cs->push_back(sym::MkEq(t, obs.ToTerm()));
      return true;
    }
    case Value::Kind::kMap: {
      if (!obs.is_map()) return fail(absl::StrCat("spec expects an object, observed ", Short(obs)));
      for (const auto& [k, v] : spec.as_map()) {
        std::string sub = path.empty() ? k : absl::StrCat(path, ".", k);
        const Value* o = obs.Find(k);
        if (IsAbsentMarker(v)) {
          if (o != nullptr) {
            mm->field = sub;
            mm->text = absl::StrCat("spec expects no field '", k, "', observed ", Short(*o));
            return false;
          }
          continue;
        }
        if (o == nullptr) {
          mm->field = sub;
          mm->text = absl::StrCat("spec expects field '", k, "' = ", Short(v), ", observed no such field");
          return false;
        }
        if (!MatchMessage(v, *o, sub, cs, mm)) return false;
      }
      return true;
    }
    case Value::Kind::kList: {
      if (!obs.is_list()) return fail(absl::StrCat("spec expects a list, observed ", Short(obs)));
      const auto& a = spec.as_list();
      const auto& b = obs.as_list();
      if (a.size() != b.size())
        return fail(absl::StrCat("spec expects a list of ", a.size(), " elements, observed ", b.size()));
      for (size_t i = 0; i < a.size(); ++i)
        if (!MatchMessage(a[i], b[i], absl::StrCat(path, "[", i, "]"), cs, mm)) return false;
      return true;
    }
    default:
      if (spec == obs) return true;
      return fail(absl::StrCat("spec expects ", Short(spec), ", observed ", Short(obs)));
  }
}

bool IsVarEqConst(const TermRef& c) {
  return c->op == sym::TermOp::kEq && c->args[0]->op == sym::TermOp::kVar && c->args[1]->IsConst();
}

}  // namespace

// Checks the label/connection discipline of a trace and maps connections
// to channels (a connection between two closes).
class TraceValidator {
 public:
  // Returns the observation's channel (-1 when it has none).
  absl::StatusOr<int> Accept(const Observation& o) {
    auto bad = [&](std::string msg) {
      return absl::InvalidArgumentError(o.line ? absl::StrCat("line ", o.line, ": ", msg) : msg);
    };
    switch (o.kind) {
      case Observation::Kind::kSent: {
        if (labels_.count(o.label)) return bad(absl::StrCat("label ", o.label, " is used twice"));
        int ch;
        auto it = conn_channel_.find(o.conn);
        if (it == conn_channel_.end()) {
          ch = static_cast<int>(unanswered_.size());
          unanswered_.emplace_back();
          conn_channel_[o.conn] = ch;
        } else {
          ch = it->second;
        }
        labels_.insert(o.label);
        unanswered_[static_cast<size_t>(ch)].push_back(o.label);
        return ch;
      }
      case Observation::Kind::kReceived: {
        auto it = conn_channel_.find(o.conn);
        if (it == conn_channel_.end() || unanswered_[static_cast<size_t>(it->second)].empty())
          return bad(absl::StrCat("response label ", o.label, " on conn ", o.conn,
                                  " but no request is outstanding on that connection"));
        auto& q = unanswered_[static_cast<size_t>(it->second)];
        if (o.label != q.front() + 1)
          return bad(absl::StrCat("response label ", o.label, " on conn ", o.conn,
                                  " does not answer the oldest outstanding request there (expected label ",
                                  q.front() + 1, ")"));
        q.pop_front();
        return it->second;
      }
      case Observation::Kind::kClosed: {
        auto it = conn_channel_.find(o.conn);
        if (it == conn_channel_.end()) return -1;
        int ch = it->second;
        unanswered_[static_cast<size_t>(ch)].clear();
        conn_channel_.erase(it);
        return ch;
      }
      case Observation::Kind::kTimeout: {
        auto it = conn_channel_.find(o.conn);
        bool ok = it != conn_channel_.end() &&
                  std::find(unanswered_[static_cast<size_t>(it->second)].begin(),
                            unanswered_[static_cast<size_t>(it->second)].end(),
                            o.label) != unanswered_[static_cast<size_t>(it->second)].end();
        if (!ok)
          return bad(absl::StrCat("timeout for label ", o.label, " on conn ", o.conn,
                                  ", which is not an outstanding request there"));
        return it->second;
      }
    }
    return -1;
  }
  // Whether `conn` is open (has a channel).
  bool IsOpen(int64_t conn) const { return conn_channel_.count(conn) > 0; }

 private:
  std::unordered_map<int64_t, int> conn_channel_;
  std::vector<std::deque<int64_t>> unanswered_;
  std::unordered_set<int64_t> labels_;
};

// The explanation search over one partition of the trace.
struct Search {
  struct Task {
    Explanation e;
    size_t next_k = 0;
  };
  struct Frame {
    size_t obs;
    uint64_t key;
    std::vector<Task> work;
    size_t head = 0;
    absl::flat_hash_set<uint64_t> visited;
  };

  std::shared_ptr<const lang::Spec> spec;
  CheckerOptions opts;
  std::unique_ptr<NetworkModel> model;
  lang::Interpreter interp;
  sym::Solver* solver;  // shared by all partitions

  // The trace so far (this partition's part of it) and what it implies.
  std::vector<Observation> obs;
  std::vector<int> obs_channel;                       // channel of each observation (-1 none)
  SentLog log;
  std::vector<size_t> closed_at;                      // per channel; SIZE_MAX while open
  uint64_t seq = 0;

  // Search state.
  Explanation cur;
  size_t next_obs = 0;
  std::vector<Frame> stack;
  absl::flat_hash_set<uint64_t> dead;
  size_t frontier = 0;
  Verdict verdict;
  size_t furthest = 0;
  CheckerStats st;
  std::mt19937_64 rng;

  Search(std::shared_ptr<const lang::Spec> s, const CheckerOptions& o, std::unique_ptr<NetworkModel> m,
         sym::Solver* shared_solver)
      : spec(std::move(s)), opts(o), model(std::move(m)), interp(spec.get()), solver(shared_solver),
        rng(o.seed) {
    cur.globals = std::make_shared<const std::vector<Value>>(spec->initial_globals);
  }

  void Append(Observation o, int ch) {
    if (o.kind == Observation::Kind::kSent) {
      if (static_cast<size_t>(ch) >= log.per_channel.size()) {
        log.per_channel.resize(static_cast<size_t>(ch) + 1);
        closed_at.resize(static_cast<size_t>(ch) + 1, SIZE_MAX);
      }
      log.per_channel[static_cast<size_t>(ch)].push_back({o.label, ch, obs.size(), seq++, o.msg});
    } else if (o.kind == Observation::Kind::kClosed && ch >= 0) {
      closed_at[static_cast<size_t>(ch)] = obs.size();
    }
    obs.push_back(std::move(o));
    obs_channel.push_back(ch);
    ++st.observations;
  }

  // Adds constraints (binding variables that are equated with constants and
  // substituting them everywhere); false with *why when they contradict.
  bool Constrain(Explanation* e, const std::vector<TermRef>& cs, std::string* why) {
    if (cs.empty()) return true;
    std::vector<TermRef> all = e->pc;
    all.insert(all.end(), cs.begin(), cs.end());
    sym::Bindings b;
    while (true) {
      bool bound = false;
      std::vector<TermRef> rest;
      rest.reserve(all.size());
      for (const auto& c0 : all) {
        TermRef c = b.empty() ? c0 : sym::Substitute(c0, b);
        if (c->op == sym::TermOp::kConstBool) {
          if (c->ival) continue;
          *why = absl::StrCat("constraint ", sym::TermToString(c0), " is false once ",
                              Describe(b));
          return false;
        }
        if (IsVarEqConst(c) && !b.count(c->args[0]->ival)) {
          b[c->args[0]->ival] = c->args[1];
          bound = true;
          continue;
        }
        rest.push_back(std::move(c));
      }
      all = std::move(rest);
      if (!bound) break;
    }
    if (!b.empty()) {
      auto g = std::make_shared<std::vector<Value>>();
      g->reserve(e->globals->size());
      for (const auto& v : *e->globals) g->push_back(ir::SubstituteValue(v, b));
      e->globals = std::move(g);
      for (auto& q : e->owed)
        for (auto& o : q) o.msg = ir::SubstituteValue(o.msg, b);
    }
    // Only constraints that are new or changed by the bindings can make the
    // (previously satisfiable) set unsatisfiable.
    std::vector<TermRef> base, added;
    for (const auto& c : all) {
      bool old = false;
      for (const auto& o : e->pc) old |= o.get() == c.get();
      (old ? base : added).push_back(c);
    }
    e->pc = std::move(all);
    if (!added.empty() && solver->CheckAdded(base, added) == sym::Solver::Result::kUnsat) {
      std::vector<std::string> parts;
      for (const auto& c : e->pc) parts.push_back(sym::TermToString(c));
      *why = absl::StrCat("constraints cannot all hold: ", absl::StrJoin(parts, " && "),
                          b.empty() ? "" : absl::StrCat(" (with ", Describe(b), ")"));
      return false;
    }
    return true;
  }

  // Drops path constraints about values the explanation can no longer
  // reach (their variables occur neither in the state nor in owed
  // responses, nor in a constraint connected to such a variable). The pc
  // is satisfiable, so each connected component is satisfiable on its own,
  // and an unreachable one can never become unsatisfiable again: dropping
  // it keeps the solver queries and the explanation hash small.
  static void DropUnreachableConstraints(Explanation* e) {
    if (e->pc.empty()) return;
    std::vector<TermRef> live;
    for (const auto& g : *e->globals) ir::CollectValueVars(g, &live);
    for (const auto& q : e->owed)
      for (const auto& o : q) ir::CollectValueVars(o.msg, &live);
    auto is_live = [&](const TermRef& v) {
      for (const auto& w : live)
        if (w->ival == v->ival && w->sort == v->sort) return true;
      return false;
    };
    std::vector<std::vector<TermRef>> vars(e->pc.size());
    for (size_t i = 0; i < e->pc.size(); ++i) sym::CollectVars(e->pc[i], &vars[i]);
    std::vector<bool> keep(e->pc.size(), false);
    bool grew = true;
    while (grew) {
      grew = false;
      for (size_t i = 0; i < e->pc.size(); ++i) {
        if (keep[i]) continue;
        bool touches = false;
        for (const auto& v : vars[i]) touches |= is_live(v);
        if (!touches) continue;
        keep[i] = true;
        grew = true;
        for (const auto& v : vars[i])
          if (!is_live(v)) live.push_back(v);
      }
    }
    std::vector<TermRef> kept;
    for (size_t i = 0; i < e->pc.size(); ++i)
      if (keep[i]) kept.push_back(e->pc[i]);
    e->pc = std::move(kept);
  }

  static std::string Describe(const sym::Bindings& b) {
    std::vector<std::string> parts;
    for (const auto& [id, t] : b) parts.push_back(absl::StrCat("#", id, " = ", sym::TermToString(t)));
    std::sort(parts.begin(), parts.end());
    return absl::StrJoin(parts, ", ");
  }

  // Runs the server step that consumes channel d's next request in every
  // possible way; appends the surviving explanations.
  absl::Status Expand(const Explanation& p, int d, size_t at_obs, std::vector<Explanation>* out) {
    const SentRequest& r = log.per_channel[d][static_cast<size_t>(p.consumed[d])];
    PathOracle oracle(solver, &p.pc, p.next_fresh);
    lang::StepOutput so;
    Value conn = Value::Int(d);
    do {
      oracle.Restart();
      ++st.handler_runs;
      if (opts.max_steps && st.handler_runs > opts.max_steps)
        return absl::ResourceExhaustedError(absl::StrCat(
            "step bound exceeded (", opts.max_steps, " spec steps); raise --max-steps"));
      absl::Status s = interp.RunHandler(*p.globals, r.msg, conn, &oracle, &so);
      if (!s.ok()) return s;
      if (so.killed || oracle.dead()) continue;
      Explanation c;
      c.globals = std::make_shared<const std::vector<Value>>(std::move(so.globals));
      c.pc = p.pc;
      c.consumed = p.consumed;
      c.owed = p.owed;
      c.EnsureChannels(log.per_channel.size());
      ++c.consumed[d];
      c.next_fresh = oracle.next_fresh();
      c.history = std::make_shared<const History>(History{r.label, p.history});
      for (auto& send : so.sends) {
        if (!send.conn.is_int() || send.conn.as_int() < 0 ||
            send.conn.as_int() >= static_cast<int64_t>(log.per_channel.size()))
          return absl::FailedPreconditionError(lang::FormatDiag(
              spec->file, send.loc,
              absl::StrCat("`send` to ", send.conn.ToString(),
                           ", which is not a connection (use the name bound by `from`)")));
        size_t ch = static_cast<size_t>(send.conn.as_int());
        if (closed_at[ch] <= at_obs) continue;  // the client is gone
        c.owed[ch].push_back({std::move(send.msg), r.label, send.loc});
      }
      std::string why;
      if (!Constrain(&c, oracle.added(), &why)) continue;
      DropUnreachableConstraints(&c);
      out->push_back(std::move(c));
    } while (oracle.NextPath());
    return absl::OkStatus();
  }

  // Keeps why an explanation of observation `at_obs` died, if that is the
  // furthest observation reached so far. Cheap when it is not kept.
  void RecordDeath(size_t at_obs, const Explanation& e, std::string text, std::string field,
                   std::string spec_loc) {
    if (at_obs > furthest) {
      furthest = at_obs;
      verdict.reasons.clear();
    }
    if (at_obs < furthest || static_cast<int>(verdict.reasons.size()) >= opts.max_reasons) return;
    DeathReason r{std::move(text), std::move(field), e.ServerOrder(), std::move(spec_loc)};
    for (const auto& x : verdict.reasons)
      if (x.text == r.text && x.server_order == r.server_order) return;
    verdict.reasons.push_back(std::move(r));
  }

  // Produces the next explanation of frame.obs; false when none is left.
  absl::StatusOr<bool> NextCandidate(Frame& f, Explanation* out) {
    const int ch = obs_channel[f.obs];
    const Observation& o = obs[f.obs];
    std::vector<int> cons;
    std::vector<Explanation> children;
    while (f.head < f.work.size()) {
      Task t = std::move(f.work[f.head++]);
      --frontier;
      Explanation& e = t.e;
      e.EnsureChannels(log.per_channel.size());
      if (!e.owed[ch].empty()) {
        ++st.explanations;
        Explanation c = e;
        Owed head = std::move(c.owed[ch].front());
        c.owed[ch].erase(c.owed[ch].begin());
        std::vector<TermRef> cs;
        Mismatch mm;
        std::string why;
        if (!MatchMessage(head.msg, o.msg, "", &cs, &mm)) {
          RecordDeath(f.obs, e, absl::StrCat(mm.field, ": ", mm.text), mm.field,
                      lang::FormatLoc(spec->file, head.loc));
          continue;
        }
        if (!Constrain(&c, cs, &why)) {
          RecordDeath(f.obs, e, why, "", lang::FormatLoc(spec->file, head.loc));
          continue;
        }
        DropUnreachableConstraints(&c);
        Compact(f);
        *out = std::move(c);
        return true;
      }
      cons.clear();
      model->Consumable(log, e.consumed, f.obs, &cons);
      OrderChannels(ch, e, f.obs, &cons);
      if (cons.empty()) {
        RecordDeath(f.obs, e,
                    "the spec's server produced no response on this connection for the "
                    "requests it has taken (it sends nothing there)",
                    "", "");
        continue;
      }
      if (t.next_k >= cons.size()) continue;
      int d = cons[t.next_k++];
      children.clear();
      absl::Status s = Expand(e, d, f.obs, &children);
      if (!s.ok()) return s;
      OrderChildren(&children);
      for (auto& c : children) {
        if (!f.visited.insert(c.Hash()).second) continue;
        f.work.push_back({std::move(c), 0});
        ++frontier;
      }
      if (t.next_k < cons.size()) {
        f.work.push_back(std::move(t));
        ++frontier;
      }
      st.max_frontier_seen = std::max(st.max_frontier_seen, frontier);
      if (frontier > opts.max_frontier)
        return absl::ResourceExhaustedError(absl::StrCat(
            "frontier bound exceeded: more than ", opts.max_frontier,
            " live explanations while explaining trace line ", o.line,
            "; raise --max-frontier (memory grows with it)"));
    }
    Compact(f);
    return false;
  }

  // The response's own channel first; the others in branch order. A task
  // is revisited once per channel (Task::next_k indexes this order), so the
  // order must be the same on every visit: the random order is drawn from
  // the explanation and the observation, never from a running generator
  // (a fresh shuffle per visit skipped channels and rejected correct traces).
  void OrderChannels(int own_ch, const Explanation& e, size_t obs_index, std::vector<int>* cons) {
    auto own = std::find(cons->begin(), cons->end(), own_ch);
    if (own != cons->end()) std::rotate(cons->begin(), own, own + 1);
    auto rest = cons->begin() + (own != cons->end() ? 1 : 0);
    switch (opts.branch_order) {
      case BranchOrder::kLast: std::reverse(rest, cons->end()); break;
      case BranchOrder::kRandom: {
        std::mt19937_64 visit_rng(opts.seed ^ (e.Hash() * 0x9e3779b97f4a7c15ull) ^ obs_index);
        std::shuffle(rest, cons->end(), visit_rng);
        break;
      }
      default: break;
    }
  }
  void OrderChildren(std::vector<Explanation>* children) {
    switch (opts.branch_order) {
      case BranchOrder::kLast: std::reverse(children->begin(), children->end()); break;
      case BranchOrder::kRandom: std::shuffle(children->begin(), children->end(), rng); break;
      case BranchOrder::kMostConstrained:
        std::stable_sort(children->begin(), children->end(),
                         [](const Explanation& a, const Explanation& b) { return a.pc.size() > b.pc.size(); });
        break;
      case BranchOrder::kFirst: break;
    }
  }

  static void Compact(Frame& f) {
    if (f.head == f.work.size()) {
      f.work.clear();
      f.work.shrink_to_fit();
      f.head = 0;
      f.visited.clear();
    } else if (f.head > 64 && f.head * 2 > f.work.size()) {
      f.work.erase(f.work.begin(), f.work.begin() + static_cast<std::ptrdiff_t>(f.head));
      f.head = 0;
    }
  }

  // Backtracks to the most recent frame with an alternative; false when
  // the search space is exhausted.
  absl::StatusOr<bool> Backtrack() {
    while (!stack.empty()) {
      Frame& top = stack.back();
      Explanation cand;
      auto found = NextCandidate(top, &cand);
      if (!found.ok()) return found.status();
      if (*found) {
        ++st.backtracks;
        cur = std::move(cand);
        next_obs = top.obs + 1;
        return true;
      }
      dead.insert(top.key);
      stack.pop_back();
    }
    return false;
  }

  void Fail(const absl::Status& s) {
    if (absl::IsResourceExhausted(s)) {
      verdict.kind = Verdict::Kind::kInconclusive;
    } else {
      verdict.kind = Verdict::Kind::kSpecError;
    }
    verdict.message = std::string(s.message());
    verdict.reasons.clear();
  }

  void Advance() {
    while (verdict.kind == Verdict::Kind::kAccept && next_obs < obs.size()) {
      const Observation& o = obs[next_obs];
      if (o.kind == Observation::Kind::kSent || o.kind == Observation::Kind::kTimeout) {
        ++next_obs;
        continue;
      }
      if (o.kind == Observation::Kind::kClosed) {
        int ch = obs_channel[next_obs];
        if (ch >= 0) {
          cur.EnsureChannels(log.per_channel.size());
          cur.owed[static_cast<size_t>(ch)].clear();
        }
        ++next_obs;
        continue;
      }
      uint64_t key = absl::HashOf(next_obs, cur.Hash());
      bool ok;
      if (dead.contains(key)) {
        ++st.memo_hits;
        ok = false;
      } else {
        stack.push_back(Frame{next_obs, key, {}, 0, {}});
        Frame& f = stack.back();
        f.visited.insert(cur.Hash());
        f.work.push_back({cur, 0});
        ++frontier;
        Explanation cand;
        auto found = NextCandidate(f, &cand);
        if (!found.ok()) return Fail(found.status());
        ok = *found;
        if (ok) {
          cur = std::move(cand);
          ++next_obs;
        }
      }
      if (!ok) {
        auto again = Backtrack();
        if (!again.ok()) return Fail(again.status());
        if (!*again) {
          verdict.kind = Verdict::Kind::kReject;
          verdict.obs_index = furthest;
          verdict.observation = obs[furthest];
          const Observation& r = obs[furthest];
          verdict.message = absl::StrCat(
              "no execution of spec '", spec->name, "' under the ", model->name(),
              " network explains response label ", r.label, " on conn ", r.conn,
              r.line ? absl::StrCat(" (trace line ", r.line, ")") : "");
          return;
        }
      }
    }
  }
};

// Routes observations to one search per partition (P-compositionality: a
// spec may declare `partition q => KEY;` when requests with different keys
// touch disjoint state; checking the parts separately is exponentially
// cheaper). Without a declaration everything is one partition.
struct Checker::Impl {
  struct Part {
    TraceValidator validator;
    std::unique_ptr<Search> search;
  };

  std::shared_ptr<const lang::Spec> spec;
  CheckerOptions opts;
  lang::Interpreter interp;
  sym::Solver solver;
  TraceValidator global;
  std::map<std::string, Part> parts;
  std::unordered_map<int64_t, Part*> part_of_label;
  Verdict verdict;
  std::vector<ir::Value> initial;

  Impl(std::shared_ptr<const lang::Spec> s, const CheckerOptions& o)
      : spec(std::move(s)), opts(o), interp(spec.get()), solver(o.solver_timeout_ms),
        initial(spec->initial_globals) {}

  absl::StatusOr<Part*> PartFor(const Observation& o) {
    std::string key;
    if (spec->ast.has_partition) {
      auto k = interp.PartitionKey(o.msg);
      if (!k.ok()) return k.status();
      key = k->ToString();
    }
    auto it = parts.find(key);
    if (it == parts.end()) {
      auto model = MakeNetworkModel(opts.network);
      if (!model.ok()) return model.status();
      Part p;
      p.search = std::make_unique<Search>(spec, opts, std::move(*model), &solver);
      it = parts.emplace(key, std::move(p)).first;
    }
    return &it->second;
  }

  absl::Status Observe(Observation o) {
    auto ch = global.Accept(o);
    if (!ch.ok()) return ch.status();
    std::vector<Part*> targets;
    switch (o.kind) {
      case Observation::Kind::kSent: {
        auto p = PartFor(o);
        if (!p.ok()) {
          verdict.kind = Verdict::Kind::kSpecError;
          verdict.message = std::string(p.status().message());
          return absl::OkStatus();
        }
        part_of_label[o.label] = *p;
        targets.push_back(*p);
        break;
      }
      case Observation::Kind::kReceived: targets.push_back(part_of_label.at(o.label - 1)); break;
      case Observation::Kind::kTimeout: targets.push_back(part_of_label.at(o.label)); break;
      case Observation::Kind::kClosed:
        for (auto& [k, p] : parts) targets.push_back(&p);
        break;
    }
    for (Part* p : targets) {
      auto pch = p->validator.Accept(o);
      if (!pch.ok()) return pch.status();  // cannot happen after the global check
      p->search->Append(o, *pch);
      p->search->Advance();
      if (p->search->verdict.kind != Verdict::Kind::kAccept) {
        verdict = p->search->verdict;
        break;
      }
    }
    return absl::OkStatus();
  }
};

Checker::Checker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Checker::~Checker() = default;

absl::StatusOr<std::unique_ptr<Checker>> Checker::Create(std::shared_ptr<const lang::Spec> spec,
                                                         const CheckerOptions& options) {
  auto model = MakeNetworkModel(options.network);
  if (!model.ok()) return model.status();
  if (options.max_frontier == 0) return absl::InvalidArgumentError("max_frontier must be positive");
  return std::unique_ptr<Checker>(new Checker(std::make_unique<Impl>(std::move(spec), options)));
}

absl::Status Checker::Observe(Observation o) {
  if (impl_->verdict.kind != Verdict::Kind::kAccept) return absl::OkStatus();
  return impl_->Observe(std::move(o));
}

const Verdict& Checker::verdict() const { return impl_->verdict; }

CheckerStats Checker::stats() const {
  CheckerStats s;
  for (const auto& [k, p] : impl_->parts) {
    const CheckerStats& x = p.search->st;
    s.observations += x.observations;
    s.handler_runs += x.handler_runs;
    s.explanations += x.explanations;
    s.backtracks += x.backtracks;
    s.memo_hits += x.memo_hits;
    s.frontier += p.search->frontier;
    s.max_frontier_seen = std::max(s.max_frontier_seen, x.max_frontier_seen);
  }
  s.solver = impl_->solver.stats();
  s.partitions = impl_->parts.size();
  return s;
}

std::vector<ir::Value> Checker::ModelState() const {
  std::vector<ir::Value> merged = impl_->initial;
  for (const auto& [k, p] : impl_->parts) {
    const auto& g = *p.search->cur.globals;
    for (size_t i = 0; i < merged.size() && i < g.size(); ++i) {
      const ir::Value& init = impl_->initial[i];
      if (g[i] == init) continue;
      if (g[i].is_map() && init.is_map() && merged[i].is_map()) {
        for (const auto& [key, v] : g[i].as_map()) {
          const ir::Value* before = init.Find(key);
          if (before == nullptr || *before != v) merged[i] = merged[i].Set(key, v);
        }
        for (const auto& [key, v] : init.as_map())
          if (g[i].Find(key) == nullptr) merged[i] = merged[i].Remove(key);
      } else {
        merged[i] = g[i];
      }
    }
  }
  return merged;
}

const char* BranchOrderName(BranchOrder o) {
  switch (o) {
    case BranchOrder::kFirst: return "first";
    case BranchOrder::kLast: return "last";
    case BranchOrder::kRandom: return "random";
    case BranchOrder::kMostConstrained: return "most-constrained";
  }
  return "?";
}

absl::StatusOr<BranchOrder> ParseBranchOrder(absl::string_view name) {
  for (BranchOrder o : {BranchOrder::kFirst, BranchOrder::kLast, BranchOrder::kRandom,
                        BranchOrder::kMostConstrained})
    if (name == BranchOrderName(o)) return o;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown branch order \"", name, "\" (known: first, last, random, most-constrained)"));
}

const char* VerdictKindName(Verdict::Kind k) {
  switch (k) {
    case Verdict::Kind::kAccept: return "accept";
    case Verdict::Kind::kReject: return "reject";
    case Verdict::Kind::kInconclusive: return "inconclusive";
    case Verdict::Kind::kSpecError: return "spec-error";
  }
  return "?";
}

absl::StatusOr<Verdict> CheckTrace(std::shared_ptr<const lang::Spec> spec,
                                   const std::vector<Observation>& trace,
                                   const CheckerOptions& options, CheckerStats* stats) {
  auto checker = Checker::Create(std::move(spec), options);
  if (!checker.ok()) return checker.status();
  for (const auto& o : trace) {
    absl::Status s = (*checker)->Observe(o);
    if (!s.ok()) return s;
    if ((*checker)->verdict().kind != Verdict::Kind::kAccept) break;
  }
  if (stats) *stats = (*checker)->stats();
  return (*checker)->verdict();
}

std::string FormatVerdict(const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kAccept: return "ACCEPT: every observation is explained by the spec\n";
    case Verdict::Kind::kInconclusive: return absl::StrCat("INCONCLUSIVE: ", v.message, "\n");
    case Verdict::Kind::kSpecError: return absl::StrCat("SPEC ERROR: ", v.message, "\n");
    case Verdict::Kind::kReject: break;
  }
  std::string out = absl::StrCat("REJECT: ", v.message, "\n  observed: ", ir::ToJson(v.observation.msg), "\n");
  if (v.reasons.empty()) return out;
  absl::StrAppend(&out, "  why each remaining explanation died:\n");
  int i = 0;
  for (const auto& r : v.reasons) {
    absl::StrAppend(&out, "  ", ++i, ". server order [", absl::StrJoin(r.server_order, ", "), "]: ",
                    r.text, r.spec_loc.empty() ? "" : absl::StrCat("  (", r.spec_loc, ")"), "\n");
  }
  return out;
}

std::string VerdictToJson(const Verdict& v, const CheckerStats* stats) {
  std::string out = absl::StrCat("{\"verdict\":\"", VerdictKindName(v.kind), "\",\"message\":");
  ir::AppendJsonString(v.message, &out);
  if (v.kind == Verdict::Kind::kReject) {
    absl::StrAppend(&out, ",\"observation\":", ObservationToJson(v.observation),
                    ",\"trace_line\":", v.observation.line, ",\"reasons\":[");
    bool first = true;
    for (const auto& r : v.reasons) {
      if (!first) out += ",";
      first = false;
      out += "{\"text\":";
      ir::AppendJsonString(r.text, &out);
      out += ",\"field\":";
      ir::AppendJsonString(r.field, &out);
      absl::StrAppend(&out, ",\"server_order\":[", absl::StrJoin(r.server_order, ","), "],\"spec_loc\":");
      ir::AppendJsonString(r.spec_loc, &out);
      out += "}";
    }
    out += "]";
  }
  if (stats) {
    absl::StrAppend(&out, ",\"stats\":{\"observations\":", stats->observations,
                    ",\"handler_runs\":", stats->handler_runs, ",\"explanations\":", stats->explanations,
                    ",\"backtracks\":", stats->backtracks, ",\"memo_hits\":", stats->memo_hits,
                    ",\"max_frontier\":", stats->max_frontier_seen, ",\"solver_checks\":",
                    stats->solver.checks, ",\"z3_calls\":", stats->solver.z3_calls,
                    ",\"z3_seconds\":", stats->solver.z3_seconds, "}");
  }
  out += "}";
  return out;
}

}  // namespace dualswarm::check
