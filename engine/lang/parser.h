// Parser for .dspec specs: tokens -> SpecAst. Recovers at top-level items so
// one run reports every syntax error, each as "file:line:col: message".
#ifndef DUALSWARM_ENGINE_LANG_PARSER_H_
#define DUALSWARM_ENGINE_LANG_PARSER_H_

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "engine/lang/ast.h"

namespace dualswarm::lang {

struct ParseResult {
  SpecAst ast;
  std::vector<std::string> errors;  // empty on success
};

ParseResult Parse(absl::string_view file, absl::string_view src);

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_PARSER_H_
