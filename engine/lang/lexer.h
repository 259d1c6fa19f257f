// Lexer for the .dspec spec language: turns source text into tokens that
// carry their line:column. Comments are `// ...` and `/* ... */`.
#ifndef DUALSWARM_ENGINE_LANG_LEXER_H_
#define DUALSWARM_ENGINE_LANG_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "engine/lang/loc.h"

namespace dualswarm::lang {

enum class Tok {
  kEof,
  kIdent,
  kInt,
  kString,
  kPunct,  // text holds the operator / punctuation, e.g. "=>" or "{"
};

struct Token {
  Tok kind;
  std::string text;  // identifier, decoded string, punctuation
  int64_t ival = 0;
  Loc loc;
};

// Returns all tokens followed by one kEof token, or the first lexical error
// as "file:line:col: message".
absl::StatusOr<std::vector<Token>> Lex(absl::string_view file, absl::string_view src);

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_LEXER_H_
