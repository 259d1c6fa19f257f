// Look-ups several remote commands share: uploading a spec file
// (SpecService.Create; `spec push`, `run submit --spec-file`), turning a
// target's NAME or ID into its id (`run submit/list`, `finding list`), and
// reading a run template's swarm size and budget flags (`run submit`,
// `campaign create`).
#ifndef DUALSWARM_CLI_REMOTE_RESOURCES_H_
#define DUALSWARM_CLI_REMOTE_RESOURCES_H_

#include <cstdint>
#include <string>

#include "cli/flags.h"
#include "cli/remote/client.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/spec.pb.h"

namespace dualswarm::cli::remote {

// Reads FILE and stores it on the coordinator (content-addressed: an
// existing version is not stored again). With a non-empty `expect_name`
// the spec must declare `spec EXPECT_NAME` (checked with Validate first).
// On failure prints the error (for a spec that does not load: every error
// as file:line:column) and sets *exit_code.
bool PushSpecFile(const Client& client, const std::string& file, const std::string& expect_name,
                  v1::CreateSpecResponse* out, int* exit_code);

// NAME|ID -> the target's id: an all-digit value is taken as the id, anything
// else is looked up by name (TargetService.Get). On failure prints the error
// and sets *exit_code.
bool ResolveTarget(const Client& client, const std::string& name_or_id, int64_t* id, int* exit_code);

// --jobs, --seed, --stop-at-first-finding, --gen and the budget flags
// (--steps, --time-budget-ms, --connections, --max-in-flight,
// --response-timeout-ms, --network) into *t; false with *err for a value
// out of range. Spec and target are the caller's.
bool RunTemplateFromFlags(const FlagMap& f, v1::RunTemplate* t, std::string* err);

}  // namespace dualswarm::cli::remote

#endif  // DUALSWARM_CLI_REMOTE_RESOURCES_H_
