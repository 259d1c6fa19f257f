// A loaded spec: parsed, checked and with its initial state evaluated. This
// is the unit the rest of the engine works with (the checker, the generator,
// the coordinator's Validate).
#ifndef DUALSWARM_ENGINE_LANG_SPEC_H_
#define DUALSWARM_ENGINE_LANG_SPEC_H_

#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "engine/ir/value.h"
#include "engine/lang/ast.h"
#include "engine/lang/branches.h"

namespace dualswarm::lang {

struct Spec {
  std::string name;
  std::string file;
  std::string source;
  std::string content_hash;  // hex FNV-1a 64 of the source, stable across machines
  std::string schema;        // "http", "json" or "" (no `use`)
  SpecAst ast;
  std::vector<std::string> global_names;
  std::vector<ir::Value> initial_globals;
  std::vector<Branch> branches;  // by id (branches.h)
};

// Parses, checks and initialises. On failure the status is InvalidArgument
// and its message lists every error, one "file:line:col: message" per line.
absl::StatusOr<std::shared_ptr<const Spec>> LoadSpec(absl::string_view file, absl::string_view source);
absl::StatusOr<std::shared_ptr<const Spec>> LoadSpecFile(const std::string& path);

// Stable 64-bit FNV-1a as 16 hex digits.
std::string StableHashHex(absl::string_view data);

// Reads a whole file; NotFound / PermissionDenied with the path on failure.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_SPEC_H_
