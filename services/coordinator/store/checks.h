// Request checks shared by the store's section files, internal to the store
// (store/*.cc): names, label/adapter lists, run templates and their budgets.
// Each returns INVALID_ARGUMENT with the reason a client sees.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_CHECKS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_CHECKS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// A client-chosen name (target, campaign, gen block): 1-64 characters from
// [A-Za-z0-9_.-].
bool IsName(const std::string& s);
// INVALID_ARGUMENT unless IsName(name): "bad `what` name ...".
absl::Status CheckName(const char* what, const std::string& name);

// Labels and adapters: at most kMaxListItems, each 1-64 characters from
// [A-Za-z0-9_.:=-] (they travel as comma-joined lists). `what` names one
// item in the message ("label").
absl::Status CheckList(const char* what, const std::vector<std::string>& items);

// Checks a budget's limits and fills in its defaults (0 / "").
absl::Status ValidateBudget(JobBudget* b);

// Checks a run template's limits and fills in defaults (budget, gen); the
// seed is left as it is (0: the caller picks a random one per run).
absl::Status ValidateTemplate(RunTemplate* t);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_CHECKS_H_
