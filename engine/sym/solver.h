// Solver: decides satisfiability of a conjunction of symbolic constraints.
// Constant constraints never reach Z3 (the concrete fast path); a variable
// a constraint decides (`v == c`) is substituted into the others first,
// constraints a variable of their own can make true are dropped, and sets
// of plain disequalities over strings/ints (always satisfiable), of those
// and prefix literals, or of integer comparisons (difference_logic.h)
// never reach Z3 either, nor do disjunctions split on (a string variable
// a side defines, `v == w` or `v == "W/" + w`, is substituted, and a
// disequality the prefix literals imply is dropped); queries
// about added constraints are sliced to the variables they share; results are
// cached by the set of constraint hashes; Z3 answers "unknown" (timeout) are
// reported as kUnknown and callers treat them as possibly satisfiable, so a
// hard query can never turn into a false rejection. Each thread keeps one
// Z3 context for all its Solvers (creating one costs more than most checks).
#ifndef DUALSWARM_ENGINE_SYM_SOLVER_H_
#define DUALSWARM_ENGINE_SYM_SOLVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/sym/term.h"

namespace dualswarm::sym {

struct SolverStats {
  uint64_t checks = 0;     // Check() calls
  uint64_t fast_path = 0;  // answered without Z3 (constants, disequalities, comparisons, witnesses)
  uint64_t cache_hits = 0;
  uint64_t z3_calls = 0;
  uint64_t z3_unknown = 0;
  double z3_seconds = 0;
};

class Solver {
 public:
  enum class Result { kSat, kUnsat, kUnknown };

  explicit Solver(unsigned timeout_ms = 2000);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  Result Check(const std::vector<TermRef>& constraints);
  // Satisfiability of base + added where `base` is known not to be unsat:
  // only the added constraints and the base constraints connected to them
  // through shared variables are checked (constraint independence).
  Result CheckAdded(const std::vector<TermRef>& base, const std::vector<TermRef>& added);
  // CheckAdded(constraints, {extra}) != kUnsat.
  bool MaybeSat(const std::vector<TermRef>& constraints, const TermRef& extra);
  // Values for `vars` (variables, by id) under which every constraint
  // holds, each a constant term of its variable's sort; nullopt when the
  // constraints are unsat, Z3 gives up (timeout) or an integer does not
  // fit 64 bits. Strings come back as Z3's bytes: a character beyond a
  // byte would be Z3's escape (`\u{...}`), so callers constrain strings to
  // the characters they mean. Always asks Z3 (no cache): for concolic
  // generation, not for checking.
  std::optional<Bindings> Model(const std::vector<TermRef>& constraints, const std::vector<TermRef>& vars);

  const SolverStats& stats() const { return stats_; }

 private:
  struct Impl;
  // This thread's Z3, created on the first query that needs it.
  static Impl* ThreadZ3();
  unsigned timeout_ms_;
  std::unordered_map<uint64_t, Result> cache_;
  SolverStats stats_;
};

}  // namespace dualswarm::sym

#endif  // DUALSWARM_ENGINE_SYM_SOLVER_H_
