// Path constraints of an explanation: adding the constraints a match or a
// branch produced (binding variables equated with constants and
// substituting them everywhere, asking the solver only about what changed),
// and dropping constraints the explanation can no longer reach.
#ifndef DUALSWARM_ENGINE_CHECK_CONSTRAINTS_H_
#define DUALSWARM_ENGINE_CHECK_CONSTRAINTS_H_

#include <string>
#include <vector>

#include "engine/check/explanation.h"
#include "engine/sym/solver.h"

namespace dualswarm::check {

// Adds `cs` to e's path constraints; false with *why when they contradict
// the ones it has (then *e is unusable).
bool Constrain(sym::Solver* solver, Explanation* e, const std::vector<sym::TermRef>& cs, std::string* why);

// Drops path constraints about values the explanation can no longer reach
// (their variables occur neither in the state nor in owed responses or the
// origin pool, nor in
// a constraint connected to such a variable). The constraints are
// satisfiable, so each connected component is satisfiable on its own, and
// an unreachable one can never become unsatisfiable again: dropping it
// keeps solver queries and memo keys small. Before that, unreachable
// integer variables that only occur in comparisons are projected out
// (sym::EliminateUnreachableIntVariables), so a counter's history shrinks
// to a bound on its reachable values.
void DropUnreachableConstraints(Explanation* e);

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_CONSTRAINTS_H_
