#include "cli/remote/resources.h"

#include "engine/harness/coverage_guide.h"

namespace dualswarm::cli::remote {

bool RunTemplateFromFlags(const FlagMap& f, v1::RunTemplate* t, std::string* err) {
  int32_t jobs = 0, connections = 0, max_in_flight = 0, guide_candidates = 0, explore_depth = 0;
  uint64_t seed = 0, steps = 0, explore_max_states = 0;
  int64_t time_ms = 0, response_ms = 0;
  if (!NumFlag(f, "jobs", 1, 100000, &jobs, err) || !NumFlag(f, "seed", 0, INT64_MAX, &seed, err) ||
      !NumFlag(f, "steps", 1, 100'000'000, &steps, err) ||
      !NumFlag(f, "time-budget-ms", 1, 7 * 86'400'000LL, &time_ms, err) ||
      !NumFlag(f, "connections", 1, 1024, &connections, err) ||
      !NumFlag(f, "max-in-flight", 1, 100000, &max_in_flight, err) ||
      !NumFlag(f, "response-timeout-ms", 1, 86'400'000, &response_ms, err) ||
      !NumFlag(f, "guide-candidates", 2, harness::kMaxGuideCandidates, &guide_candidates, err) ||
      !NumFlag(f, "explore-depth", 1, 64, &explore_depth, err) ||
      !NumFlag(f, "explore-max-states", 1, 2'000'000, &explore_max_states, err))
    return false;
  if (f.count("explore-max-states") && !f.count("explore-depth")) {
    *err = "--explore-max-states is for explore runs: give --explore-depth N too";
    return false;
  }
  if (f.count("network") && f.at("network") != "tcp" && f.at("network") != "sync") {
    *err = "--network must be tcp or sync";
    return false;
  }
  t->set_jobs(jobs);
  t->set_seed(seed);
  t->set_stop_at_first_finding(f.count("stop-at-first-finding") > 0);
  if (f.count("gen")) t->set_gen(f.at("gen"));
  v1::JobBudget* b = t->mutable_budget();
  b->set_steps(steps);
  b->set_time_budget_ms(time_ms);
  b->set_connections(connections);
  b->set_max_in_flight(max_in_flight);
  b->set_response_timeout_ms(response_ms);
  // --coverage-guided: as `dualswarm test --coverage-guided`.
  if (f.count("coverage-guided") && guide_candidates == 0) guide_candidates = harness::kDefaultGuideCandidates;
  b->set_guide_candidates(guide_candidates);
  if (f.count("network")) b->set_network(f.at("network"));
  b->set_explore_depth(explore_depth);
  b->set_explore_max_states(explore_max_states);
  return true;
}

}  // namespace dualswarm::cli::remote
