// Difference logic: decides, without Z3, conjunctions of integer
// comparisons between two variables or a variable and a constant, each side
// possibly plus or minus a constant (`x < y`, `y <= x + 3`, `0 < x`,
// `x == y`, and their negations). Without `!=` such a set is a system of
// constraints `a - b <= k`; it is satisfiable over the integers exactly when
// the graph with an edge b -> a of weight k per constraint has no negative
// cycle (Bellman-Ford). A disequality the system's model violates splits
// into `<` or `>` (at most 128 systems per query). Symbolic counters (cas
// uniques, versions, sequence numbers that only grow) produce long chains
// of these, which Z3 takes milliseconds each to decide and this takes
// microseconds.
#ifndef DUALSWARM_ENGINE_SYM_DIFFERENCE_LOGIC_H_
#define DUALSWARM_ENGINE_SYM_DIFFERENCE_LOGIC_H_

#include <functional>
#include <optional>
#include <vector>

#include "engine/sym/term.h"

namespace dualswarm::sym {

// Satisfiability of the conjunction of `constraints` when every one of them
// is a comparison as above; nullopt when some is not (the caller asks
// another procedure), when there are more than 1024 constraints, or when
// disequalities need more than 128 systems, or the systems more than 4M
// edge relaxations (about 10 ms).
std::optional<bool> DifferenceLogicSat(const std::vector<TermRef>& constraints);

// Projects integer variables nothing can reach any more out of a
// satisfiable set of constraints (Fourier-Motzkin elimination, exact for
// difference constraints over the integers): a variable `is_live` rejects
// that occurs only in comparisons as above (in no `!=` and no other kind of
// constraint) is replaced by what its bounds imply (x <= v + a and
// v <= y + b give x <= y + a + b; a variable bounded on one side only
// just goes), where that does not add constraints. The result holds for
// exactly the values of the other variables for which the input held. A
// counter that only grows (`u1 < u2`, `u2 < u3`, ... with only the newest
// reachable) then leaves one bound instead of a chain as long as the
// history. False (nothing changed) when no variable was eliminated.
bool EliminateUnreachableIntVariables(std::vector<TermRef>* constraints,
                                      const std::function<bool(const TermRef& var)>& is_live);

}  // namespace dualswarm::sym

#endif  // DUALSWARM_ENGINE_SYM_DIFFERENCE_LOGIC_H_
