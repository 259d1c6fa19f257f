// Matching a response the spec's server sent (possibly symbolic) against the
// one the client observed. Fields the spec does not mention are ignored; a
// field whose spec value is `none` must be absent; `some(v)` means v.
// Symbolic leaves become equality constraints for the caller to add.
#ifndef DUALSWARM_ENGINE_CHECK_MATCH_H_
#define DUALSWARM_ENGINE_CHECK_MATCH_H_

#include <string>
#include <vector>

#include "engine/ir/value.h"
#include "engine/sym/term.h"

namespace dualswarm::check {

// Where and why a match failed.
struct Mismatch {
  std::string field;  // dotted path, "(message)" for the whole message (the first that differs)
  std::string text;
};

// True when `obs` may be `spec`; appends the constraints that must hold.
// On a mismatch, fills `mm` unless it is null (the texts cost more than the
// match: a search that only needs the answer passes null).
bool MatchMessage(const ir::Value& spec, const ir::Value& obs, std::vector<sym::TermRef>* cs, Mismatch* mm);

// How many fields of `obs` would have to change for it to match `spec`
// (leaves compared as MatchMessage compares them; a symbolic leaf of the
// right sort counts as matching): how close a dead explanation came, so a
// rejection can report the closest ones. Builds no text.
int CountMismatches(const ir::Value& spec, const ir::Value& obs);

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_MATCH_H_
