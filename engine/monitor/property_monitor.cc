#include "engine/monitor/property_monitor.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "engine/lang/limits.h"
#include "engine/lang/loc.h"

namespace dualswarm::monitor {

using lang::Formula;
using TermPtr = PropertyMonitor::TermPtr;

// A residual formula: true, false, a conjunction or disjunction (operands
// simplified, distinct and sorted by hash), a negation, or `pending`: source
// formula f must hold from the next event on (`left`: the events an
// `eventually within` has left).
struct PropertyMonitor::Term {
  enum class Kind { kTrue, kFalse, kAnd, kOr, kNot, kPending };
  Kind kind = Kind::kTrue;
  const Formula* f = nullptr;  // kPending
  int64_t left = 0;            // kPending of a kEventually
  std::vector<TermPtr> subs;   // kAnd / kOr: 2 or more; kNot: 1
  uint64_t hash = 0;           // the same in every process (Mix): residuals sort by it
  size_t size = 1;             // nodes, for the obligation bound
  size_t depth = 1;            // nesting, for the depth bound
};

namespace {

using Term = PropertyMonitor::Term;
using Kind = Term::Kind;

bool Equal(const TermPtr& a, const TermPtr& b) {
  if (a == b) return true;
  if (a->hash != b->hash || a->kind != b->kind || a->f != b->f || a->left != b->left ||
      a->subs.size() != b->subs.size())
    return false;
  for (size_t i = 0; i < a->subs.size(); ++i)
    if (!Equal(a->subs[i], b->subs[i])) return false;
  return true;
}

// A hash that does not depend on the process (absl's is seeded per
// process, and formulas' addresses differ): residuals are sorted by it, and
// their text keys explore's states, which seed its random orders.
uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

TermPtr Make(Kind kind, const Formula* f, int64_t left, std::vector<TermPtr> subs) {
  auto t = std::make_shared<Term>();
  t->kind = kind;
  t->f = f;
  t->left = left;
  uint64_t h = Mix(static_cast<uint64_t>(kind), static_cast<uint64_t>(left));
  if (f != nullptr) h = Mix(h, (static_cast<uint64_t>(f->loc.line) << 32) | static_cast<uint32_t>(f->loc.col));
  for (const auto& s : subs) {
    h = Mix(h, s->hash);
    t->size += s->size;
    t->depth = std::max(t->depth, s->depth + 1);
  }
  t->hash = h;
  t->subs = std::move(subs);
  return t;
}

const TermPtr& True() {
  static const TermPtr t = Make(Kind::kTrue, nullptr, 0, {});
  return t;
}
const TermPtr& False() {
  static const TermPtr t = Make(Kind::kFalse, nullptr, 0, {});
  return t;
}

int64_t Budget(const Formula* f) { return f->kind == Formula::Kind::kEventually ? f->within : 0; }

TermPtr Pending(const Formula* f, int64_t left) { return Make(Kind::kPending, f, left, {}); }

TermPtr Not(TermPtr a) {
  if (a->kind == Kind::kTrue) return False();
  if (a->kind == Kind::kFalse) return True();
  if (a->kind == Kind::kNot) return a->subs[0];
  return Make(Kind::kNot, nullptr, 0, {std::move(a)});
}

// A conjunction (`conj`) or disjunction of `parts`, simplified: nested ones
// flattened, units dropped, a zero decides, repeats removed, and of two
// windows of the same `eventually` the one that implies the other kept
// (both count from now: in a conjunction the shorter, in a disjunction the
// longer).
TermPtr Junction(bool conj, std::vector<TermPtr> parts) {
  const Kind self = conj ? Kind::kAnd : Kind::kOr;
  const Kind unit = conj ? Kind::kTrue : Kind::kFalse;
  const Kind zero = conj ? Kind::kFalse : Kind::kTrue;
  std::vector<TermPtr> flat;
  for (auto& p : parts) {
    if (p->kind == zero) return p;
    if (p->kind == unit) continue;
    if (p->kind == self) {
      flat.insert(flat.end(), p->subs.begin(), p->subs.end());
    } else {
      flat.push_back(std::move(p));
    }
  }
  // One window per `eventually` (merged as above), then the rest sorted by
  // hash with repeats dropped.
  std::vector<TermPtr> kept;
  // An eventuality's pending window -> its index in kept (few: one per
  // `eventually` of the formula).
  absl::InlinedVector<std::pair<const Formula*, size_t>, 4> window;
  for (auto& p : flat) {
    if (p->kind == Kind::kPending && p->f->kind == Formula::Kind::kEventually) {
      auto it = std::find_if(window.begin(), window.end(), [&](const auto& w) { return w.first == p->f; });
      if (it == window.end()) {
        window.emplace_back(p->f, kept.size());
      } else {
        TermPtr& k = kept[it->second];
        if (conj ? p->left < k->left : p->left > k->left) k = std::move(p);
        continue;
      }
    }
    kept.push_back(std::move(p));
  }
  std::sort(kept.begin(), kept.end(), [](const TermPtr& a, const TermPtr& b) { return a->hash < b->hash; });
  kept.erase(std::unique(kept.begin(), kept.end(), Equal), kept.end());
  if (kept.empty()) return conj ? True() : False();
  if (kept.size() == 1) return kept[0];
  return Make(self, nullptr, 0, std::move(kept));
}

TermPtr And(TermPtr a, TermPtr b) { return Junction(true, {std::move(a), std::move(b)}); }
TermPtr Or(TermPtr a, TermPtr b) { return Junction(false, {std::move(a), std::move(b)}); }

void AppendText(const lang::Spec& spec, const TermPtr& t, std::string* out) {
  switch (t->kind) {
    case Kind::kTrue:
      out->append("true");
      return;
    case Kind::kFalse:
      out->append("false");
      return;
    case Kind::kNot:
      out->append("!(");
      AppendText(spec, t->subs[0], out);
      out->append(")");
      return;
    case Kind::kAnd:
    case Kind::kOr:
      out->append("(");
      for (size_t i = 0; i < t->subs.size(); ++i) {
        if (i) out->append(t->kind == Kind::kAnd ? " && " : " || ");
        AppendText(spec, t->subs[i], out);
      }
      out->append(")");
      return;
    case Kind::kPending:
      absl::StrAppend(out, "@", t->f->loc.line, ":", t->f->loc.col);
      if (t->f->kind == Formula::Kind::kEventually) absl::StrAppend(out, "/", t->left);
      return;
  }
}

}  // namespace

// One event's progression of the residual: Prog(f, left) is what source
// formula f (with `left` events of its window, for an eventuality) leaves
// to hold after this event.
class PropertyMonitor::Progress {
 public:
  Progress(const PropertyMonitor& m, const MonitorEvent& e) : m_(m), e_(e) {}

  absl::StatusOr<TermPtr> Step(const TermPtr& t) {
    switch (t->kind) {
      case Kind::kTrue:
      case Kind::kFalse:
        return t;
      case Kind::kNot: {
        absl::StatusOr<TermPtr> a = Step(t->subs[0]);
        if (!a.ok()) return a.status();
        return Not(*std::move(a));
      }
      case Kind::kAnd:
      case Kind::kOr: {
        std::vector<TermPtr> parts;
        for (const auto& s : t->subs) {
          absl::StatusOr<TermPtr> a = Step(s);
          if (!a.ok()) return a.status();
          parts.push_back(*std::move(a));
        }
        return Junction(t->kind == Kind::kAnd, std::move(parts));
      }
      case Kind::kPending: {
        // Pending obligations repeat (an `always` leaves the same one at
        // every event): each (formula, window) is progressed once per event.
        const auto key = std::make_pair(t->f, t->left);
        if (auto it = progressed_.find(key); it != progressed_.end()) return it->second;
        absl::StatusOr<TermPtr> p = Prog(t->f, t->left);
        if (p.ok()) progressed_.emplace(key, *p);
        return p;
      }
    }
    return t;
  }

  bool deadline_missed() const { return deadline_missed_; }
  bool unknown() const { return unknown_; }

 private:
  absl::StatusOr<TermPtr> Prog(const Formula* f, int64_t left) {
    switch (f->kind) {
      case Formula::Kind::kAtom: {
        // Every obligation that reaches this condition asks it of the same
        // event: evaluated once.
        if (auto it = atoms_.find(f); it != atoms_.end()) return it->second;
        absl::StatusOr<TermPtr> value = Evaluate(f);
        if (value.ok()) atoms_.emplace(f, *value);
        return value;
      }
      case Formula::Kind::kNot: {
        absl::StatusOr<TermPtr> a = Prog(f->left.get(), Budget(f->left.get()));
        if (!a.ok()) return a.status();
        return Not(*std::move(a));
      }
      case Formula::Kind::kAnd:
      case Formula::Kind::kOr:
      case Formula::Kind::kImplies: {
        absl::StatusOr<TermPtr> a = Prog(f->left.get(), Budget(f->left.get()));
        if (!a.ok()) return a.status();
        // Decided by the left side already: the right one is not evaluated
        // (so `{ r != none } => { r.status < 500 }` guards as it reads).
        const Kind decided = (*a)->kind;
        if (f->kind == Formula::Kind::kAnd && decided == Kind::kFalse) return False();
        if (f->kind == Formula::Kind::kOr && decided == Kind::kTrue) return True();
        if (f->kind == Formula::Kind::kImplies && decided == Kind::kFalse) return True();
        absl::StatusOr<TermPtr> b = Prog(f->right.get(), Budget(f->right.get()));
        if (!b.ok()) return b.status();
        if (f->kind == Formula::Kind::kAnd) return And(*std::move(a), *std::move(b));
        if (f->kind == Formula::Kind::kOr) return Or(*std::move(a), *std::move(b));
        return Or(Not(*std::move(a)), *std::move(b));
      }
      case Formula::Kind::kNext:
        return Pending(f->left.get(), Budget(f->left.get()));
      case Formula::Kind::kAlways: {
        absl::StatusOr<TermPtr> now = Prog(f->left.get(), Budget(f->left.get()));
        if (!now.ok()) return now.status();
        return And(*std::move(now), Pending(f, 0));
      }
      case Formula::Kind::kEventually: {
        absl::StatusOr<TermPtr> now = Prog(f->left.get(), Budget(f->left.get()));
        if (!now.ok()) return now.status();
        if (left > 0) return Or(*std::move(now), Pending(f, left - 1));
        if ((*now)->kind == Kind::kFalse) deadline_missed_ = true;
        return now;
      }
      case Formula::Kind::kUntil: {
        absl::StatusOr<TermPtr> goal = Prog(f->right.get(), Budget(f->right.get()));
        if (!goal.ok()) return goal.status();
        absl::StatusOr<TermPtr> hold = Prog(f->left.get(), Budget(f->left.get()));
        if (!hold.ok()) return hold.status();
        return Or(*std::move(goal), And(*std::move(hold), Pending(f, 0)));
      }
    }
    return True();
  }

  // Condition f on the event.
  absl::StatusOr<TermPtr> Evaluate(const Formula* f) {
    absl::StatusOr<lang::Interpreter::PropertyTruth> v =
        m_.interp_.EvalPropertyCondition(m_.decl(), *f->atom, e_.request, e_.response, ir::Value::Int(e_.conn));
    if (!v.ok()) return v.status();
    if (*v == lang::Interpreter::PropertyTruth::kUnknown) {
      unknown_ = true;
      return False();  // not judged: the monitor stops (unknown())
    }
    return *v == lang::Interpreter::PropertyTruth::kTrue ? True() : False();
  }

  const PropertyMonitor& m_;
  const MonitorEvent& e_;
  absl::flat_hash_map<const Formula*, TermPtr> atoms_;                           // the conditions evaluated on e_
  absl::flat_hash_map<std::pair<const Formula*, int64_t>, TermPtr> progressed_;  // pending obligations, on e_
  bool deadline_missed_ = false;
  bool unknown_ = false;
};

PropertyMonitor::PropertyMonitor(const lang::Spec* spec, size_t index)
    : spec_(spec),
      index_(index),
      interp_(spec),
      state_(Pending(spec->ast.properties[index].formula.get(), Budget(spec->ast.properties[index].formula.get()))) {}

const lang::PropertyDecl& PropertyMonitor::decl() const { return spec_->ast.properties[index_]; }

bool PropertyMonitor::violated() const { return !unknown_ && state_->kind == Kind::kFalse; }

absl::Status PropertyMonitor::Step(const MonitorEvent& e) {
  if (unknown_ || state_->kind == Kind::kFalse || state_->kind == Kind::kTrue) return absl::OkStatus();
  ++events_;
  Progress p(*this, e);
  absl::StatusOr<TermPtr> next = p.Step(state_);
  if (!next.ok()) return next.status();
  if (p.unknown()) {
    unknown_ = true;
    return absl::OkStatus();
  }
  if ((*next)->size > lang::kMaxMonitorObligations || (*next)->depth > lang::kMaxMonitorDepth)
    return absl::ResourceExhaustedError(lang::FormatDiag(
        spec_->file, decl().loc,
        absl::StrCat("property '", decl().name, "': its monitor holds more than ", lang::kMaxMonitorObligations,
                     " obligations or nests them more than ", lang::kMaxMonitorDepth, " deep after ", events_,
                     " events (limit: monitor obligations)")));
  state_ = *std::move(next);
  deadline_missed_ = state_->kind == Kind::kFalse && p.deadline_missed();
  return absl::OkStatus();
}

std::string PropertyMonitor::Describe() const {
  if (unknown_) return "unknown";
  std::string out;
  AppendText(*spec_, state_, &out);
  return out;
}

PropertyMonitors::PropertyMonitors(const lang::Spec* spec) {
  for (size_t i = 0; i < spec->ast.properties.size(); ++i) monitors_.emplace_back(spec, i);
}

absl::Status PropertyMonitors::Step(const MonitorEvent& e) {
  for (auto& m : monitors_)
    if (absl::Status s = m.Step(e); !s.ok()) return s;
  return absl::OkStatus();
}

const PropertyMonitor* PropertyMonitors::violated() const {
  for (const auto& m : monitors_)
    if (m.violated()) return &m;
  return nullptr;
}

size_t PropertyMonitors::unknown() const {
  return static_cast<size_t>(
      std::count_if(monitors_.begin(), monitors_.end(), [](const PropertyMonitor& m) { return m.unknown(); }));
}

std::string PropertyMonitors::Describe() const {
  std::string out;
  for (const auto& m : monitors_) absl::StrAppend(&out, m.Describe(), "\n");
  return out;
}

}  // namespace dualswarm::monitor
