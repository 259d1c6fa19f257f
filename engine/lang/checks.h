// Load-time checks for a parsed spec: resolves every name to a local slot,
// a global or a function (builtin or user), numbers the gen choice sites,
// and reports every problem it finds (unknown names, wrong arity, gen-only
// constructs outside `gen`, `send` outside handlers, duplicates, ...) as
// "file:line:col: message".
#ifndef DUALSWARM_ENGINE_LANG_CHECKS_H_
#define DUALSWARM_ENGINE_LANG_CHECKS_H_

#include <string>
#include <vector>

#include "engine/lang/ast.h"

namespace dualswarm::lang {

struct BuiltinInfo {
  const char* name;
  Builtin id;
  int min_args;
  int max_args;
  bool gen_only;
};

// nullptr when `name` is not a builtin.
const BuiltinInfo* FindBuiltin(const std::string& name);

// Resolves names in place; returns all errors (empty when the spec is fine).
std::vector<std::string> CheckAndResolve(SpecAst* ast);

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_CHECKS_H_
