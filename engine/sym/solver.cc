#include "engine/sym/solver.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

#include <z3++.h>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "engine/sym/difference_logic.h"

namespace dualswarm::sym {

struct Solver::Impl {
  Impl() : solver(ctx, "QF_SLIA") {}
  void SetTimeout(unsigned timeout_ms) {
    if (timeout_ms == timeout_ms_set) return;
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    solver.set(p);
    timeout_ms_set = timeout_ms;
  }
  z3::context ctx;
  z3::solver solver;
  unsigned timeout_ms_set = 0;
  // Translation memo; holds the TermRef so the node (and its address) lives.
  std::unordered_map<const TermNode*, std::pair<TermRef, z3::expr>> memo;

  z3::expr Translate(const TermRef& t) {
    auto it = memo.find(t.get());
    if (it != memo.end()) return it->second.second;
    z3::expr e = Build(t);
    memo.emplace(t.get(), std::make_pair(t, e));
    return e;
  }

  z3::expr Build(const TermRef& t) {
    auto a = [&](int i) { return Translate(t->args[i]); };
    switch (t->op) {
      case TermOp::kVar: {
        std::string name = absl::StrCat(SortName(t->sort), "_", t->ival);
        switch (t->sort) {
          case Sort::kBool:
            return ctx.bool_const(name.c_str());
          case Sort::kInt:
            return ctx.int_const(name.c_str());
          case Sort::kString:
            return ctx.string_const(name.c_str());
        }
        break;
      }
      case TermOp::kConstBool:
        return ctx.bool_val(t->ival != 0);
      case TermOp::kConstInt:
        return ctx.int_val(static_cast<int64_t>(t->ival));
      // Byte-exact (Z3_mk_lstring): no escape processing, NULs kept, one
      // character per byte, as the concrete folding counts them.
      case TermOp::kConstString:
        return ctx.string_val(t->sval.data(), static_cast<unsigned>(t->sval.size()));
      case TermOp::kEq:
        return a(0) == a(1);
      case TermOp::kNot:
        return !a(0);
      case TermOp::kAnd:
        return a(0) && a(1);
      case TermOp::kOr:
        return a(0) || a(1);
      case TermOp::kAdd:
        return a(0) + a(1);
      case TermOp::kSub:
        return a(0) - a(1);
      case TermOp::kMul:
        return a(0) * a(1);
      case TermOp::kLt:
        return a(0) < a(1);
      case TermOp::kLe:
        return a(0) <= a(1);
      case TermOp::kConcat:
        return z3::concat(a(0), a(1));
      case TermOp::kLen:
        return a(0).length();
      case TermOp::kPrefixOf:
        return z3::prefixof(a(0), a(1));
      case TermOp::kSuffixOf:
        return z3::suffixof(a(0), a(1));
      case TermOp::kContains:
        return a(0).contains(a(1));
      case TermOp::kSubstr:
        return a(0).extract(a(1), a(2));
      case TermOp::kToInt:
        return a(0).stoi();
      case TermOp::kIte:
        return z3::ite(a(0), a(1), a(2));
    }
    return ctx.bool_val(true);
  }
};

// Creating a Z3 context with the string solver costs about 70 ms, more than
// most whole checks: each thread keeps one for every Solver it runs (Z3
// contexts are not thread-safe; queries push and pop, so none sees
// another's constraints).
Solver::Impl* Solver::ThreadZ3() {
  thread_local std::unique_ptr<Impl> impl;
  if (!impl) impl = std::make_unique<Impl>();
  return impl.get();
}

Solver::Solver(unsigned timeout_ms) : timeout_ms_(timeout_ms) {}

Solver::~Solver() = default;

namespace {

// Whether t is a disequality between a string/int variable and a constant
// or another string/int variable.
bool IsSimpleDisequality(const TermRef& t) {
  if (t->op != TermOp::kNot || t->args[0]->op != TermOp::kEq) return false;
  const TermRef& a = t->args[0]->args[0];
  const TermRef& b = t->args[0]->args[1];
  if (a->sort == Sort::kBool) return false;
  return (a->op == TermOp::kVar || a->IsConst()) && (b->op == TermOp::kVar || b->IsConst());
}

// Hash of a term with variables replaced by their canonical index
// (numbered by first occurrence); with `shape_only` all variables hash the
// same. Renaming variables does not change satisfiability, so queries that
// differ only in variable ids share one cache entry.
uint64_t CanonicalHash(const TermRef& t, std::vector<std::pair<int64_t, Sort>>* seen, bool shape_only) {
  if (t->op == TermOp::kVar) {
    if (shape_only) return absl::HashOf(0x7a11, static_cast<int>(t->sort));
    size_t idx = 0;
    while (idx < seen->size() && !((*seen)[idx].first == t->ival && (*seen)[idx].second == t->sort)) ++idx;
    if (idx == seen->size()) seen->push_back({t->ival, t->sort});
    return absl::HashOf(0x7a12, static_cast<int>(t->sort), idx);
  }
  if (t->args.empty()) return t->hash;
  uint64_t h = absl::HashOf(static_cast<int>(t->op), static_cast<int>(t->sort), t->ival);
  for (const auto& a : t->args) h = absl::HashOf(h, CanonicalHash(a, seen, shape_only));
  return h;
}

void CollectConstants(const TermRef& t, std::vector<TermRef>* out) {
  if (t->IsConst()) {
    for (const auto& c : *out)
      if (TermEqual(c, t)) return;
    out->push_back(t);
    return;
  }
  for (const auto& a : t->args) CollectConstants(a, out);
}

// Only disequalities over infinite sorts (string, int): always
// satisfiable, since finitely many values are excluded.
bool OnlySimpleDisequalities(const std::vector<TermRef>& live) {
  return std::all_of(live.begin(), live.end(), IsSimpleDisequality);
}

// Syntactic contradiction: some constraint and its negation are both present.
bool HasComplementaryPair(const std::vector<TermRef>& live) {
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i]->op != TermOp::kNot) continue;
    for (size_t j = 0; j < live.size(); ++j)
      if (j != i && TermEqual(live[i]->args[0], live[j])) return true;
  }
  return false;
}

// Whether two of the variables share an id but not a sort (bindings are
// keyed by id alone; CollectVars lists each variable once).
bool IdsCollide(const std::vector<TermRef>& vars) {
  std::vector<int64_t> ids;
  ids.reserve(vars.size());
  for (const auto& v : vars) ids.push_back(v->ival);
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) != ids.end();
}

// `!(a || b)` as two constraints `!a` and `!b` (the same models), so that
// the procedures below see the disequalities it holds.
void SplitNegatedDisjunctions(std::vector<TermRef>* live) {
  for (size_t i = 0; i < live->size(); ++i) {
    const TermRef c = (*live)[i];
    if (c->op != TermOp::kNot || c->args[0]->op != TermOp::kOr) continue;
    (*live)[i] = MkNot(c->args[0]->args[0]);
    live->push_back(MkNot(c->args[0]->args[1]));
    --i;  // the first half may be a negated disjunction too
  }
}

// Whether `t` contains the variable with this id and sort.
bool Contains(const TermRef& t, int64_t id, Sort sort) {
  if (t->op == TermOp::kVar) return t->ival == id && t->sort == sort;
  if (!t->has_var) return false;
  for (const auto& a : t->args)
    if (Contains(a, id, sort)) return true;
  return false;
}

// The variable a constraint decides on its own (`v == c`, a bool `v`, or
// `!v`) and its value; false when it decides none.
bool DecidedVariable(const TermRef& c, int64_t* id, TermRef* value) {
  if (c->op == TermOp::kVar && c->sort == Sort::kBool) {
    *id = c->ival;
    *value = MkBool(true);
    return true;
  }
  if (c->op == TermOp::kNot && c->args[0]->op == TermOp::kVar) {
    *id = c->args[0]->ival;
    *value = MkBool(false);
    return true;
  }
  if (c->op == TermOp::kEq && c->args[0]->op == TermOp::kVar && c->args[1]->IsConst()) {
    *id = c->args[0]->ival;
    *value = c->args[1];
    return true;
  }
  return false;
}

// A string variable a constraint defines by a term it does not occur in
// (`v == w`, `w == "W/" + v`): its id and the term. (Integer equalities
// stay as they are, for the difference-logic procedure.)
bool DefinedVariable(const TermRef& c, int64_t* id, TermRef* value) {
  if (c->op != TermOp::kEq || c->args[0]->sort != Sort::kString) return false;
  for (int side = 0; side < 2; ++side) {
    const TermRef& v = c->args[side];
    if (v->op == TermOp::kVar && !Contains(c->args[1 - side], v->ival, v->sort)) {
      *id = v->ival;
      *value = c->args[1 - side];
      return true;
    }
  }
  return false;
}

// Puts the value of every variable a constraint decides (`v == c`) into
// the others, until none is left: the result is satisfiable exactly when
// `live` is (in every model v is c), has fewer variables, and folding
// often decides it, so no solver is needed (`v == "a"` and `v == "b"`
// fold to false; a disjunction of tags with one of them). When no
// constant decides one, a variable a constraint defines by a term (`v ==
// e`, v not in e) is replaced by that term, one per round (so that no
// two replacements refer to each other). Returns false when a constraint
// folds to false.
bool PropagateDecidedVariables(std::vector<TermRef>* live) {
  bool ids_checked = false;
  // Each round removes the variables it binds from every constraint, so
  // the rounds end.
  for (;;) {
    Bindings b;
    for (const auto& c : *live) {
      int64_t id;
      TermRef value;
      if (DecidedVariable(c, &id, &value) && !b.contains(id)) b[id] = value;
    }
    if (b.empty()) {
      for (const auto& c : *live) {
        int64_t id;
        TermRef value;
        // A small term only: substitution does not share subterms, so a
        // definition like `v == w + w` chained would grow exponentially.
        if (DefinedVariable(c, &id, &value) && value->tree_size <= 64) {
          b[id] = value;
          break;
        }
      }
    }
    if (b.empty()) return true;
    if (!ids_checked) {
      std::vector<TermRef> vars;
      for (const auto& c : *live) CollectVars(c, &vars);
      if (IdsCollide(vars)) return true;
      ids_checked = true;
    }
    std::vector<TermRef> out;
    out.reserve(live->size());
    for (const auto& c : *live) {
      TermRef r = Substitute(c, b);
      if (r->op == TermOp::kConstBool) {
        if (!r->ival) return false;
        continue;
      }
      out.push_back(std::move(r));
    }
    *live = std::move(out);
  }
}

// Whether `c` says that a string variable starts (`positive`) or does not
// start with a constant.
bool PrefixLiteral(const TermRef& c, TermRef* var, std::string* prefix, bool* positive) {
  *positive = c->op != TermOp::kNot;
  const TermRef& p = *positive ? c : c->args[0];
  if (p->op != TermOp::kPrefixOf || p->args[0]->op != TermOp::kConstString || p->args[1]->op != TermOp::kVar)
    return false;
  *var = p->args[1];
  *prefix = p->args[0]->sval;
  return true;
}

// Sets of disequalities and of prefix literals on single variables (tags
// that are or are not weak): each variable's literals either contradict
// each other (unsat) or leave it infinitely many values, so the
// disequalities can always be met (sat). nullopt for any other set.
std::optional<bool> PrefixesAndDisequalitiesSat(const std::vector<TermRef>& live) {
  struct Literals {
    std::vector<std::string> starts, not_starts;
  };
  absl::flat_hash_map<int64_t, Literals> of;
  for (const auto& c : live) {
    if (IsSimpleDisequality(c)) continue;
    TermRef var;
    std::string prefix;
    bool positive;
    if (!PrefixLiteral(c, &var, &prefix, &positive)) return std::nullopt;
    auto& l = of[var->ival];
    (positive ? l.starts : l.not_starts).push_back(prefix);
  }
  auto starts_with = [](const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; };
  for (const auto& [id, l] : of) {
    // The longest required prefix must extend every other one ...
    std::string longest;
    for (const auto& p : l.starts)
      if (p.size() > longest.size()) longest = p;
    for (const auto& p : l.starts)
      if (!starts_with(longest, p)) return false;
    // ... and not start with a forbidden one; then `longest` followed by
    // any of infinitely many strings avoids every forbidden prefix.
    for (const auto& p : l.not_starts)
      if (starts_with(longest, p)) return false;
  }
  return true;
}

// Drops a disequality the prefix literals already imply: one side surely
// starts with a string (a constant, a concatenation with a constant head,
// or a variable required to start with it) that the other side, a
// variable, must not start with (`"W/" + a != b` where b is not weak).
// What is left has the same models.
void DropImpliedDisequalities(std::vector<TermRef>* live) {
  absl::flat_hash_map<int64_t, std::vector<std::string>> starts, not_starts;
  for (const auto& c : *live) {
    TermRef var;
    std::string prefix;
    bool positive;
    if (PrefixLiteral(c, &var, &prefix, &positive)) (positive ? starts : not_starts)[var->ival].push_back(prefix);
  }
  if (not_starts.empty()) return;
  auto head = [&](const TermRef& t) -> std::string {
    if (t->op == TermOp::kConstString) return t->sval;
    if (t->op == TermOp::kConcat && t->args[0]->op == TermOp::kConstString) return t->args[0]->sval;
    std::string longest;
    if (t->op == TermOp::kVar && t->sort == Sort::kString)
      if (auto it = starts.find(t->ival); it != starts.end())
        for (const auto& p : it->second)
          if (p.size() > longest.size()) longest = p;
    return longest;
  };
  auto implied = [&](const TermRef& a, const TermRef& b) {
    if (b->op != TermOp::kVar || b->sort != Sort::kString) return false;
    auto it = not_starts.find(b->ival);
    if (it == not_starts.end()) return false;
    const std::string h = head(a);
    for (const auto& q : it->second)
      if (!q.empty() && h.compare(0, q.size(), q) == 0) return true;
    return false;
  };
  live->erase(std::remove_if(live->begin(), live->end(),
                             [&](const TermRef& c) {
                               if (c->op != TermOp::kNot || c->args[0]->op != TermOp::kEq) return false;
                               const TermRef& a = c->args[0]->args[0];
                               const TermRef& b = c->args[0]->args[1];
                               return implied(a, b) || implied(b, a);
                             }),
              live->end());
}

using VarCounts = absl::flat_hash_map<std::pair<int64_t, int>, int>;

int CountOf(const VarCounts& counts, const TermRef& v) {
  auto it = counts.find({v->ival, static_cast<int>(v->sort)});
  return it == counts.end() ? 0 : it->second;
}

// Whether `t` is `to_int(v)` of a variable that occurs once.
bool ToIntOfAFreeVariable(const TermRef& t, const VarCounts& counts) {
  return t->op == TermOp::kToInt && t->args[0]->op == TermOp::kVar && CountOf(counts, t->args[0]) == 1;
}

// Whether a variable that occurs in no other constraint can make `c` true
// on its own: `c` is (or has a disjunct) `v == e` with v not in e, a bool
// `v` or `!v`, or a bound on `to_int(v)` that some string meets (every
// number from -1 up is one's: a received Age at least the origin's).
bool AFreeVariableSatisfies(const TermRef& c, const VarCounts& counts) {
  switch (c->op) {
    case TermOp::kLe:
    case TermOp::kLt: {
      const bool strict = c->op == TermOp::kLt;
      const TermRef &a = c->args[0], &b = c->args[1];
      if (a->op == TermOp::kConstInt && ToIntOfAFreeVariable(b, counts))  // k <= to_int(v)
        return !strict || a->ival < INT64_MAX;
      if (b->op == TermOp::kConstInt && ToIntOfAFreeVariable(a, counts))  // to_int(v) <= k
        return strict ? b->ival > -1 : b->ival >= -1;
      return false;
    }
    case TermOp::kOr:
      return AFreeVariableSatisfies(c->args[0], counts) || AFreeVariableSatisfies(c->args[1], counts);
    case TermOp::kVar:
      return c->sort == Sort::kBool && CountOf(counts, c) == 1;
    case TermOp::kNot:
      return c->args[0]->op == TermOp::kVar && CountOf(counts, c->args[0]) == 1;
    case TermOp::kEq:
      for (int side = 0; side < 2; ++side) {
        const TermRef& v = c->args[side];
        if (v->op == TermOp::kVar && CountOf(counts, v) == 1 && !Contains(c->args[1 - side], v->ival, v->sort))
          return true;
      }
      return false;
    default:
      return false;
  }
}

// Drops every constraint a variable of its own can make true (choose
// `v = e`): what is left is satisfiable exactly when the whole is. A
// response's new value tied to a stored one (`t == now || t == "W/" +
// now`) is such a constraint until the response binds `now`.
void DropConstraintsAFreeVariableSatisfies(std::vector<TermRef>* live) {
  for (bool dropped = true; dropped && !live->empty();) {
    VarCounts counts;
    for (const auto& c : *live) {
      std::vector<TermRef> vars;
      CollectVars(c, &vars);
      for (const auto& v : vars) ++counts[{v->ival, static_cast<int>(v->sort)}];
    }
    const size_t before = live->size();
    live->erase(
        std::remove_if(live->begin(), live->end(), [&](const TermRef& c) { return AFreeVariableSatisfies(c, counts); }),
        live->end());
    dropped = live->size() != before;
  }
}

// The values `c` allows a string or int variable when it is a disjunction
// of `v == constant` (at most 8), or false.
bool FiniteDomain(const TermRef& c, TermRef* var, std::vector<TermRef>* values) {
  if (c->op == TermOp::kOr)
    return FiniteDomain(c->args[0], var, values) && FiniteDomain(c->args[1], var, values) && values->size() <= 8;
  if (c->op != TermOp::kEq || c->args[0]->op != TermOp::kVar || !c->args[1]->IsConst()) return false;
  const TermRef& v = c->args[0];
  if (*var && !((*var)->ival == v->ival && (*var)->sort == v->sort)) return false;
  *var = v;
  values->push_back(c->args[1]);
  return true;
}

// Tries to find a satisfying assignment among values suggested by the
// constants in the constraints (and values distinct from all of them). A
// witness proves satisfiability without Z3; failing to find one proves
// nothing.
bool FindWitness(const std::vector<TermRef>& live) {
  std::vector<TermRef> vars, consts;
  for (const auto& c : live) {
    CollectVars(c, &vars);
    CollectConstants(c, &consts);
  }
  if (vars.empty() || vars.size() > 4) return false;
  // Bindings are keyed by id: give up if two variables of different sorts share one.
  if (IdsCollide(vars)) return false;
  std::vector<std::vector<TermRef>> cands(vars.size());
  for (size_t v = 0; v < vars.size(); ++v) {
    auto& cs = cands[v];
    auto add = [&](TermRef t) {
      for (const auto& x : cs)
        if (TermEqual(x, t)) return;
      cs.push_back(std::move(t));
    };
    switch (vars[v]->sort) {
      case Sort::kBool:
        add(MkBool(true));
        add(MkBool(false));
        break;
      case Sort::kInt:
        for (const auto& c : consts)
          if (c->op == TermOp::kConstInt && c->ival > INT64_MIN + 1 && c->ival < INT64_MAX - 1) {
            add(c);
            add(MkInt(c->ival + 1));
            add(MkInt(c->ival - 1));
          }
        add(MkInt(0));
        add(MkInt(1000003 + static_cast<int64_t>(v)));
        break;
      case Sort::kString:
        for (const auto& c : consts) {
          // A number a string spells (`to_int(v) >= 3`: "3", "4").
          if (c->op == TermOp::kConstInt && c->ival >= 0 && c->ival < INT64_MAX - 1) {
            add(MkString(std::to_string(c->ival)));
            add(MkString(std::to_string(c->ival + 1)));
          }
          if (c->op != TermOp::kConstString) continue;
          add(c);
          add(MkString("W/" + c->sval));
          if (c->sval.rfind("W/", 0) == 0) add(MkString(c->sval.substr(2)));
        }
        add(MkString(""));
        add(MkString(std::string("\x01") + "ds" + std::to_string(v)));
        add(MkString(std::string("W/\x01") + "ds" + std::to_string(v)));
        break;
    }
  }
  size_t combos = 1;
  for (const auto& cs : cands) {
    combos *= cs.size();
    if (combos > 4096) return false;
  }
  std::vector<size_t> pick(vars.size(), 0);
  for (size_t n = 0; n < combos; ++n) {
    Bindings b;
    size_t rest = n;
    for (size_t v = 0; v < vars.size(); ++v) {
      b[vars[v]->ival] = cands[v][rest % cands[v].size()];
      rest /= cands[v].size();
    }
    bool ok = true;
    for (const auto& c : live) {
      TermRef r = Substitute(c, b);
      if (r->op != TermOp::kConstBool || !r->ival) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

uint64_t CanonicalKey(const std::vector<TermRef>& live) {
  std::vector<std::pair<uint64_t, size_t>> order;
  order.reserve(live.size());
  std::vector<std::pair<int64_t, Sort>> none;
  for (size_t i = 0; i < live.size(); ++i) order.push_back({CanonicalHash(live[i], &none, true), i});
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int64_t, Sort>> seen;
  std::vector<uint64_t> hashes;
  hashes.reserve(live.size());
  for (const auto& [shape, i] : order) hashes.push_back(CanonicalHash(live[i], &seen, false));
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  return absl::HashOf(hashes);
}

// The cheap procedures, in order; nullopt when only Z3 can tell. `live`
// is left simplified (decided variables substituted, constraints a free
// variable satisfies dropped) for Z3. A constraint that allows a variable
// a few constants only (`v == a || v == b`) is split on them, up to
// `splits` deep and `*branches` branches in all: sat when some value is,
// unsat when every value is. Deciding one value often leaves the next
// variable a few constants (a chain of shown entity tags, each the one
// before or its `W/` form: `t1 == t0 || t1 == "W/" + t0`), which Z3's
// string theory took up to 340 ms for; split, such a chain costs a few
// substitutions per link.
constexpr int kMaxSplitDepth = 12;
constexpr int kMaxSplitBranches = 32;

std::optional<Solver::Result> Cheap(std::vector<TermRef>* live, int splits, int* branches) {
  using Result = Solver::Result;
  SplitNegatedDisjunctions(live);
  if (!PropagateDecidedVariables(live)) return Result::kUnsat;
  DropImpliedDisequalities(live);
  DropConstraintsAFreeVariableSatisfies(live);
  if (OnlySimpleDisequalities(*live)) return Result::kSat;
  if (HasComplementaryPair(*live)) return Result::kUnsat;
  if (std::optional<bool> sat = PrefixesAndDisequalitiesSat(*live)) return *sat ? Result::kSat : Result::kUnsat;
  if (std::optional<bool> sat = DifferenceLogicSat(*live)) return *sat ? Result::kSat : Result::kUnsat;
  if (FindWitness(*live)) return Result::kSat;
  if (splits == 0) return std::nullopt;
  for (const auto& c : *live) {
    TermRef var;
    std::vector<TermRef> values;
    if (!FiniteDomain(c, &var, &values)) continue;
    bool all_unsat = true;
    for (const auto& value : values) {
      if (--*branches < 0) return std::nullopt;
      std::vector<TermRef> branch = *live;
      branch.push_back(MkEq(var, value));
      std::optional<Result> r = Cheap(&branch, splits - 1, branches);
      if (r == Result::kSat) return Result::kSat;
      all_unsat &= r == Result::kUnsat;
    }
    if (all_unsat) return Result::kUnsat;
    return std::nullopt;
  }
  // Any other disjunction: sat when the rest holds with one of its sides,
  // unsat when with neither (`a == b || b == "W/" + a`: each side then
  // defines a variable, which the branch substitutes).
  for (size_t i = 0; i < live->size(); ++i) {
    if ((*live)[i]->op != TermOp::kOr) continue;
    const TermRef disjunction = (*live)[i];
    bool all_unsat = true;
    for (const auto& side : disjunction->args) {
      if (--*branches < 0) return std::nullopt;
      std::vector<TermRef> branch = *live;
      branch[i] = side;
      std::optional<Result> r = Cheap(&branch, splits - 1, branches);
      if (r == Result::kSat) return Result::kSat;
      all_unsat &= r == Result::kUnsat;
    }
    return all_unsat ? std::optional<Result>(Result::kUnsat) : std::nullopt;
  }
  return std::nullopt;
}

// The constant term a Z3 model value stands for, or null when it is not a
// value of `sort` that a term can hold.
TermRef ConstantOf(z3::context& ctx, const z3::expr& value, Sort sort) {
  switch (sort) {
    case Sort::kBool:
      if (value.is_true()) return MkBool(true);
      if (value.is_false()) return MkBool(false);
      return nullptr;
    case Sort::kInt: {
      int64_t i = 0;
      if (!value.is_numeral_i64(i)) return nullptr;
      return MkInt(i);
    }
    case Sort::kString: {
      if (!value.is_string_value()) return nullptr;
      unsigned length = 0;
      const char* bytes = Z3_get_lstring(ctx, value, &length);
      if (bytes == nullptr || Z3_get_error_code(ctx) != Z3_OK) return nullptr;
      return MkString(std::string(bytes, length));
    }
  }
  return nullptr;
}

}  // namespace

Solver::Result Solver::Check(const std::vector<TermRef>& constraints) {
  ++stats_.checks;
  std::vector<TermRef> live;
  live.reserve(constraints.size());
  for (const auto& c : constraints) {
    if (c->op == TermOp::kConstBool) {
      if (!c->ival) {
        ++stats_.fast_path;
        return Result::kUnsat;
      }
      continue;
    }
    live.push_back(c);
  }
  if (OnlySimpleDisequalities(live)) {  // also when empty; before the cache key
    ++stats_.fast_path;
    return Result::kSat;
  }
  uint64_t key = CanonicalKey(live);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  int branches = kMaxSplitBranches;
  if (std::optional<Result> r = Cheap(&live, kMaxSplitDepth, &branches)) {
    ++stats_.fast_path;
    cache_.emplace(key, *r);
    return *r;
  }
  Impl* impl = ThreadZ3();
  impl->SetTimeout(timeout_ms_);
  if (impl->memo.size() > 200000) impl->memo.clear();
  if (cache_.size() > 200000) cache_.clear();
  ++stats_.z3_calls;
  auto start = std::chrono::steady_clock::now();
  Result r;
  impl->solver.push();
  for (const auto& c : live) impl->solver.add(impl->Translate(c));
  switch (impl->solver.check()) {
    case z3::sat:
      r = Result::kSat;
      break;
    case z3::unsat:
      r = Result::kUnsat;
      break;
    default:
      r = Result::kUnknown;
      ++stats_.z3_unknown;
      break;
  }
  impl->solver.pop();
  stats_.z3_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cache_.emplace(key, r);
  return r;
}

Solver::Result Solver::CheckAdded(const std::vector<TermRef>& base, const std::vector<TermRef>& added) {
  // Slice: the added constraints plus every base constraint connected to
  // them through shared variables. The rest was satisfiable on its own and
  // shares nothing with the slice, so it cannot make the whole unsat.
  std::vector<TermRef> vars;
  for (const auto& c : added) CollectVars(c, &vars);
  std::vector<TermRef> slice = added;
  std::vector<bool> taken(base.size(), false);
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t i = 0; i < base.size(); ++i) {
      if (taken[i]) continue;
      std::vector<TermRef> cv;
      CollectVars(base[i], &cv);
      bool shares = false;
      for (const auto& v : cv)
        for (const auto& w : vars)
          if (v->ival == w->ival && v->sort == w->sort) shares = true;
      if (!shares) continue;
      taken[i] = true;
      grew = true;
      slice.push_back(base[i]);
      for (const auto& v : cv) {
        bool have = false;
        for (const auto& w : vars) have |= v->ival == w->ival && v->sort == w->sort;
        if (!have) vars.push_back(v);
      }
    }
  }
  return Check(slice);
}

bool Solver::MaybeSat(const std::vector<TermRef>& constraints, const TermRef& extra) {
  if (extra->op == TermOp::kConstBool) return extra->ival != 0;
  return CheckAdded(constraints, {extra}) != Result::kUnsat;
}

std::optional<Bindings> Solver::Model(const std::vector<TermRef>& constraints, const std::vector<TermRef>& vars) {
  Impl* impl = ThreadZ3();
  impl->SetTimeout(timeout_ms_);
  if (impl->memo.size() > 200000) impl->memo.clear();
  ++stats_.z3_calls;
  const auto start = std::chrono::steady_clock::now();
  std::optional<Bindings> out;
  impl->solver.push();
  try {
    for (const auto& c : constraints) impl->solver.add(impl->Translate(c));
    if (impl->solver.check() == z3::sat) {
      const z3::model model = impl->solver.get_model();
      out.emplace();
      for (const auto& v : vars) {
        if (v->op != TermOp::kVar) continue;
        const z3::expr value = model.eval(impl->Translate(v), /*model_completion=*/true);
        TermRef constant = ConstantOf(impl->ctx, value, v->sort);
        if (constant == nullptr) {
          out.reset();
          break;
        }
        (*out)[v->ival] = std::move(constant);
      }
    }
  } catch (const z3::exception&) {  // Z3 refused a value: no model, as unknown
    out.reset();
  }
  impl->solver.pop();
  stats_.z3_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace dualswarm::sym
