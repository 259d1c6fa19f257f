// The branches of a spec, numbered for coverage: every arm of an `if`
// (the else arm too, written or not), every `match` arm, every `either`
// alternative and every `oneof`/`freq` alternative has an id, stable for a
// given source. The interpreter reports the ids a run took (interp.h); the
// checker keeps those of the explanation it accepted and the tester those
// of the requests it generated (docs/coverage.md).
#ifndef DUALSWARM_ENGINE_LANG_BRANCHES_H_
#define DUALSWARM_ENGINE_LANG_BRANCHES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/lang/ast.h"
#include "engine/lang/loc.h"

namespace dualswarm::lang {

enum class BranchKind { kIfThen, kIfElse, kMatchArm, kEither, kAlternative };

struct Branch {
  Loc loc;  // the arm's first token; an unwritten else arm: the `if`
  BranchKind kind = BranchKind::kIfThen;
  int index = 0;      // arm or alternative, from 0
  int count = 0;      // arms or alternatives of its construct
  std::string scope;  // the declaration it is in: "on recv", "fn name", "gen name", ...
};

// Numbers the branches of every function, handler and `gen` block of `ast`
// (in that order, each in source order): sets Expr::branch on each `if`,
// `match`, `either`, `oneof` and `freq`, and returns the table, indexed by
// id. Initial values and the partition key have none: no explanation or
// request runs them.
std::vector<Branch> NumberBranches(SpecAst* ast);

// "if: then", "if: else", "match arm 2 of 3", "either alternative 1 of 2",
// "gen alternative 3 of 4" (oneof/freq): the branch, without its place.
std::string BranchLabel(const Branch& b);

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_BRANCHES_H_
