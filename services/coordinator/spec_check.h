// Spec validation for the coordinator: loads a spec with the engine's
// loader (engine/lang/spec.h) and turns its diagnostics into structured
// errors with line and column, for SpecService.Validate and Create.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SPEC_CHECK_H_
#define DUALSWARM_SERVICES_COORDINATOR_SPEC_CHECK_H_

#include <string>
#include <vector>

namespace dualswarm::coord {

struct SpecDiagnostic {
  std::string file;
  int line = 0;  // 0 when the loader gave no position
  int column = 0;
  std::string message;
};

struct SpecCheck {
  bool valid = false;
  std::vector<SpecDiagnostic> errors;  // every error, in the loader's order
  std::string name;                    // when valid
  int choice_sites = 0;                // when valid
  std::vector<std::string> gens;       // when valid: the gen block names, in order (and "request" for an interface)
  bool origin_role = false;            // when valid: it has an origin role (an intermediary)
  // All errors as "file:line:column: message" lines (the loader's format).
  std::string ErrorText() const;
};

SpecCheck CheckSpec(const std::string& file_name, const std::string& source);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SPEC_CHECK_H_
