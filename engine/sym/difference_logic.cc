#include "engine/sym/difference_logic.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace dualswarm::sym {
namespace {

constexpr size_t kMaxConstraints = 1024;
// Systems solved per query when disequalities split it (each split doubles).
constexpr int kMaxSystems = 128;
// Edge relaxations per query, over all systems (about 10 ms); past it the
// caller asks Z3.
constexpr int64_t kMaxRelaxations = int64_t{4} << 20;

// One side of a comparison: variable + offset, or (no variable) offset.
struct Side {
  bool has_var = false;
  int64_t var = 0;
  __int128 offset = 0;
};

bool ParseSide(const TermRef& t, Side* s) {
  if (t->op == TermOp::kVar) {
    if (t->sort != Sort::kInt) return false;
    *s = Side{true, t->ival, 0};
    return true;
  }
  if (t->op == TermOp::kConstInt) {
    *s = Side{false, 0, t->ival};
    return true;
  }
  if (t->op != TermOp::kAdd && t->op != TermOp::kSub) return false;
  const TermRef& a = t->args[0];
  const TermRef& b = t->args[1];
  const TermRef* var = nullptr;
  const TermRef* k = nullptr;
  if (a->op == TermOp::kVar && b->op == TermOp::kConstInt) {
    var = &a;
    k = &b;
  } else if (t->op == TermOp::kAdd && a->op == TermOp::kConstInt && b->op == TermOp::kVar) {
    var = &b;
    k = &a;
  } else {
    return false;
  }
  if ((*var)->sort != Sort::kInt) return false;
  __int128 c = (*k)->ival;
  *s = Side{true, (*var)->ival, t->op == TermOp::kAdd ? c : -c};
  return true;
}

// The system x_to - x_from <= w, one edge per constraint; node 0 is zero.
class System {
 public:
  // a - b <= k. False when it is a constant contradiction.
  bool AddLe(const Side& a, const Side& b, __int128 k) {
    const __int128 w = k - a.offset + b.offset;
    const size_t to = Node(a);
    const size_t from = Node(b);
    if (to == from) return w >= 0;
    edges_.push_back({from, to, w});
    return true;
  }

  // No negative cycle (Bellman-Ford from a virtual source at distance 0 to
  // every node). When feasible, *model holds a solution per node, node 0
  // (zero) at 0.
  // nullopt once *work (edge relaxations left) runs out.
  std::optional<bool> Feasible(std::vector<__int128>* model, int64_t* work) const {
    std::vector<__int128>& dist = *model;
    dist.assign(nodes_.size() + 1, 0);
    for (size_t round = 0; round <= nodes_.size() + 1; ++round) {
      *work -= static_cast<int64_t>(edges_.size());
      if (*work < 0) return std::nullopt;
      bool changed = false;
      for (const Edge& e : edges_) {
        if (dist[e.from] + e.w < dist[e.to]) {
          dist[e.to] = dist[e.from] + e.w;
          changed = true;
        }
      }
      if (!changed) {
        const __int128 zero = dist[0];
        for (auto& d : dist) d -= zero;
        return true;
      }
    }
    return false;
  }

  // Gives s's variable a node, so models cover it.
  void Register(const Side& s) { Node(s); }

  // The value of `s` (registered) in a model of Feasible.
  __int128 ValueOf(const Side& s, const std::vector<__int128>& model) const {
    return (s.has_var ? model[nodes_.at(s.var)] : 0) + s.offset;
  }

 private:
  struct Edge {
    size_t from, to;
    __int128 w;
  };
  size_t Node(const Side& s) {
    if (!s.has_var) return 0;
    auto [it, inserted] = nodes_.try_emplace(s.var, nodes_.size() + 1);
    return it->second;
  }
  absl::flat_hash_map<int64_t, size_t> nodes_;  // variable id -> node (1..)
  std::vector<Edge> edges_;
};

struct Disequality {
  Side a, b;
};

// p - q <= k.
struct Le {
  Side p, q;
  __int128 k;
};

// Reads comparison `c` as one or two `<=` (appended to *les) or as a
// disequality (*diseq); false when it is no comparison of the kind this
// file decides. The one place that knows how each operator reads.
bool ParseComparison(const TermRef& c, std::vector<Le>* les, std::optional<Disequality>* diseq) {
  const bool negated = c->op == TermOp::kNot;
  const TermRef& atom = negated ? c->args[0] : c;
  const TermOp op = atom->op;
  if (op != TermOp::kLt && op != TermOp::kLe && op != TermOp::kEq) return false;
  Side a, b;
  if (!ParseSide(atom->args[0], &a) || !ParseSide(atom->args[1], &b)) return false;
  if (op == TermOp::kEq && negated) {
    *diseq = Disequality{a, b};
  } else if (op == TermOp::kEq) {
    les->push_back({a, b, 0});
    les->push_back({b, a, 0});
  } else if (!negated) {
    les->push_back({a, b, op == TermOp::kLt ? -1 : 0});  // a < b: a - b <= -1
  } else {
    les->push_back({b, a, op == TermOp::kLt ? 0 : -1});  // !(a < b): b - a <= 0
  }
  return true;
}

enum class Parsed { kOk, kContradiction, kNotDifferenceLogic };

// Adds `c` to the system, or to `diseqs` when it is `a != b`.
Parsed AddLiteral(const TermRef& c, System* sys, std::vector<Disequality>* diseqs) {
  if (c->op == TermOp::kConstBool) return c->ival ? Parsed::kOk : Parsed::kContradiction;
  std::vector<Le> les;
  std::optional<Disequality> diseq;
  if (!ParseComparison(c, &les, &diseq)) return Parsed::kNotDifferenceLogic;
  if (diseq.has_value()) diseqs->push_back(*diseq);
  for (const Le& le : les)
    if (!sys->AddLe(le.p, le.q, le.k)) return Parsed::kContradiction;
  return Parsed::kOk;
}

// Satisfiability of `sys` together with `diseqs`: a model of the system
// that already satisfies every disequality answers at once; otherwise one
// violated `a != b` splits into `a < b` or `a > b` (exact over the
// integers). nullopt past the budget: `budget->systems` solved or
// `budget->relaxations` done.
struct Budget {
  int systems = kMaxSystems;
  int64_t relaxations = kMaxRelaxations;
};
std::optional<bool> SolveWithDisequalities(const System& sys, const std::vector<Disequality>& diseqs, Budget* budget) {
  if (--budget->systems < 0) return std::nullopt;
  std::vector<__int128> model;
  std::optional<bool> feasible = sys.Feasible(&model, &budget->relaxations);
  if (!feasible.value_or(false)) return feasible;
  for (const Disequality& d : diseqs) {
    if (sys.ValueOf(d.a, model) != sys.ValueOf(d.b, model)) continue;
    bool saw_unknown = false;
    for (int side = 0; side < 2; ++side) {
      System branch = sys;
      const bool added = side == 0 ? branch.AddLe(d.a, d.b, -1) : branch.AddLe(d.b, d.a, -1);
      if (!added) continue;
      std::optional<bool> r = SolveWithDisequalities(branch, diseqs, budget);
      if (!r.has_value()) saw_unknown = true;
      if (r.value_or(false)) return true;
    }
    if (saw_unknown) return std::nullopt;
    return false;
  }
  return true;
}

// ---- Elimination -----------------------------------------------------------

// x - y <= w over variable ids (kZero: the constant 0).
constexpr int64_t kZero = std::numeric_limits<int64_t>::min();
struct Bound {
  int64_t x, y;
  __int128 w;
  size_t source;  // index of the constraint it came from; SIZE_MAX: derived
};

int64_t IdOf(const Side& s) { return s.has_var ? s.var : kZero; }

// The bounds of comparison `c` (no `!=`); false when it is not one.
bool BoundsOf(const TermRef& c, size_t source, std::vector<Bound>* out) {
  std::vector<Le> les;
  std::optional<Disequality> diseq;
  if (!ParseComparison(c, &les, &diseq) || diseq.has_value()) return false;
  for (const Le& le : les) out->push_back({IdOf(le.p), IdOf(le.q), le.k - le.p.offset + le.q.offset, source});
  return true;
}

// x - y <= w as a term: x <= y + w (x, y variables, by id in `vars`, or 0).
TermRef BoundTerm(const Bound& b, const absl::flat_hash_map<int64_t, TermRef>& vars) {
  auto var = [&](int64_t id) { return vars.at(id); };
  const int64_t w = static_cast<int64_t>(b.w);
  if (b.x == kZero) return MkLe(MkInt(-w), var(b.y));  // -y <= w
  if (b.y == kZero) return MkLe(var(b.x), MkInt(w));
  return MkLe(var(b.x), w == 0 ? var(b.y) : MkAdd(var(b.y), MkInt(w)));
}

bool FitsInt64(__int128 w) {
  return w > std::numeric_limits<int64_t>::min() + 1 && w < std::numeric_limits<int64_t>::max() - 1;
}

// Eliminates `v` from `bounds` if that adds no bound; false otherwise.
bool EliminateOne(int64_t v, std::vector<Bound>* bounds) {
  std::vector<Bound> lower, upper, rest;  // lower: x - v <= w; upper: v - y <= w
  for (const Bound& b : *bounds) {
    if (b.x == v && b.y == v) return false;  // never made (AddLe folds it); be safe
    if (b.y == v) {
      lower.push_back(b);
    } else if (b.x == v) {
      upper.push_back(b);
    } else {
      rest.push_back(b);
    }
  }
  if (lower.size() * upper.size() > lower.size() + upper.size()) return false;
  for (const Bound& l : lower)
    for (const Bound& u : upper) {
      const __int128 w = l.w + u.w;
      if (l.x == u.y) {
        if (w < 0) return false;  // contradiction: the set was satisfiable, so not expected
        continue;                 // always true
      }
      if (!FitsInt64(w)) return false;
      rest.push_back({l.x, u.y, w, SIZE_MAX});
    }
  *bounds = std::move(rest);
  return true;
}

}  // namespace

bool EliminateUnreachableIntVariables(std::vector<TermRef>* constraints,
                                      const std::function<bool(const TermRef& var)>& is_live) {
  std::vector<Bound> bounds;
  std::vector<TermRef> others;
  absl::flat_hash_set<int64_t> pinned;               // int variables of other constraints
  absl::flat_hash_map<int64_t, TermRef> vars_by_id;  // int variables of comparisons
  for (size_t i = 0; i < constraints->size(); ++i) {
    const TermRef& c = (*constraints)[i];
    std::vector<TermRef> vars;
    CollectVars(c, &vars);
    const bool comparison = BoundsOf(c, i, &bounds);
    if (!comparison) others.push_back(c);
    for (const TermRef& v : vars) {
      if (v->sort != Sort::kInt) continue;
      if (!comparison) pinned.insert(v->ival);
      if (comparison) vars_by_id.try_emplace(v->ival, v);
    }
  }
  // In id order, so the result does not depend on hash-table order.
  std::vector<std::pair<int64_t, TermRef>> order(vars_by_id.begin(), vars_by_id.end());
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  bool eliminated = false;
  for (const auto& [id, var] : order) {
    if (pinned.contains(id) || id == kZero || is_live(var)) continue;
    eliminated |= EliminateOne(id, &bounds);
  }
  if (!eliminated) return false;
  // Constraints whose bounds survive stay as they were written.
  std::vector<TermRef> out = std::move(others);
  absl::flat_hash_set<size_t> kept;
  for (const Bound& b : bounds) {
    if (b.source == SIZE_MAX) {
      out.push_back(BoundTerm(b, vars_by_id));
    } else if (kept.insert(b.source).second) {
      out.push_back((*constraints)[b.source]);
    }
  }
  *constraints = std::move(out);
  return true;
}

std::optional<bool> DifferenceLogicSat(const std::vector<TermRef>& constraints) {
  if (constraints.size() > kMaxConstraints) return std::nullopt;
  System sys;
  std::vector<Disequality> diseqs;
  bool contradiction = false;
  for (const TermRef& c : constraints) {
    switch (AddLiteral(c, &sys, &diseqs)) {
      case Parsed::kOk:
        break;
      case Parsed::kContradiction:
        contradiction = true;
        break;
      case Parsed::kNotDifferenceLogic:
        return std::nullopt;
    }
  }
  if (contradiction) return false;
  for (const Disequality& d : diseqs) {
    sys.Register(d.a);
    sys.Register(d.b);
  }
  Budget budget;
  return SolveWithDisequalities(sys, diseqs, &budget);
}

}  // namespace dualswarm::sym
