// Source locations and the error format every spec diagnostic uses:
// "file:line:column: message".
#ifndef DUALSWARM_ENGINE_LANG_LOC_H_
#define DUALSWARM_ENGINE_LANG_LOC_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/strings/str_cat.h"

namespace dualswarm::lang {

struct Loc {
  int line = 0;
  int col = 0;
};

inline std::string FormatDiag(absl::string_view file, Loc loc, absl::string_view msg) {
  return absl::StrCat(file, ":", loc.line, ":", loc.col, ": ", msg);
}

inline std::string FormatLoc(absl::string_view file, Loc loc) {
  return absl::StrCat(file, ":", loc.line, ":", loc.col);
}

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_LOC_H_
