// The nemesis's schedule (workers/runner/nemesis.h): drawn from the seed
// (the same seed gives the same faults at the same offsets when heals take
// no time), every fault healed before the next, times within the configured bounds, and options
// that could only produce false liveness findings refused; and which links
// a split and a bridge cut (engine/harness/faults.h).
#include "workers/runner/nemesis.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/harness/faults.h"
#include "gtest/gtest.h"

namespace dualswarm::workers {
namespace {

// The actions a runner polling every millisecond gets until `until_ns`.
std::vector<FaultAction> Schedule(uint64_t seed, int64_t until_ns, std::vector<std::string> faults = {"pause"}) {
  NemesisOptions o;
  o.faults = std::move(faults);
  o.interval_ms = 100;
  o.duration_ms = 40;
  Nemesis n(o, seed, 3);
  std::vector<FaultAction> all;
  for (int64_t t = 0; t <= until_ns; t += 1'000'000)
    for (FaultAction& a : n.Due(t)) all.push_back(std::move(a));
  return all;
}

TEST(Nemesis, TheSeedDecidesTheSchedule) {
  auto a = Schedule(7, 5'000'000'000);
  auto b = Schedule(7, 5'000'000'000);
  auto c = Schedule(8, 5'000'000'000);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].at_ns, b[i].at_ns);
    EXPECT_EQ(a[i].action, b[i].action);
    EXPECT_EQ(a[i].node, b[i].node);
  }
  bool differs = a.size() != c.size();
  for (size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].at_ns != c[i].at_ns || a[i].node != c[i].node;
  EXPECT_TRUE(differs);
}

TEST(Nemesis, EveryPauseIsResumedBeforeTheNext) {
  auto s = Schedule(3, 10'000'000'000);
  // 10 s at one fault per 50-150 ms gap plus 40 ms: 50 to 110 faults.
  ASSERT_GE(s.size(), 100u);
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    EXPECT_EQ(s[i].action, "pause");
    EXPECT_EQ(s[i + 1].action, "resume");
    EXPECT_EQ(s[i + 1].node, s[i].node);
    EXPECT_EQ(s[i + 1].at_ns - s[i].at_ns, 40'000'000);
    EXPECT_GE(s[i].node, 0);
    EXPECT_LT(s[i].node, 3);
    if (i >= 2) {  // planned from the poll that returned the heal (1 ms steps)
      int64_t gap = s[i].at_ns - s[i - 1].at_ns;
      EXPECT_GE(gap, 50'000'000);
      EXPECT_LT(gap, 151'000'000);
    }
  }
}

// A kill is healed by a restart of the same node; the next fault is
// planned only once the restart was handed out (a restart may take long:
// the node must become ready), so faults never pile up behind a slow heal.
TEST(Nemesis, KillsAreRestartedAndTheNextFaultWaitsForTheRestart) {
  auto s = Schedule(5, 5'000'000'000, {"kill", "pause"});
  ASSERT_GE(s.size(), 40u);
  int kills = 0;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    ASSERT_TRUE(s[i].action == "kill" || s[i].action == "pause") << s[i].action;
    EXPECT_EQ(s[i + 1].action, s[i].action == "kill" ? "restart" : "resume");
    EXPECT_EQ(s[i + 1].node, s[i].node);
    kills += s[i].action == "kill";
  }
  EXPECT_GT(kills, 5);
  NemesisOptions o;
  o.faults = {"kill"};
  o.interval_ms = 100;
  o.duration_ms = 40;
  Nemesis n(o, 5, 3);
  std::vector<FaultAction> first;
  int64_t t = 0;
  while (first.size() < 2) {
    for (FaultAction& a : n.Due(t)) first.push_back(std::move(a));
    t += 1'000'000;
  }
  ASSERT_EQ(first[1].action, "restart");
  // The restart took 10 s: the next kill comes 50-150 ms after that, not
  // at once.
  const int64_t after_restart = first[1].at_ns + 10'000'000'000;
  EXPECT_TRUE(n.Due(after_restart).empty());
  std::vector<FaultAction> next;
  for (t = after_restart; next.empty(); t += 1'000'000) next = n.Due(t);
  EXPECT_EQ(next[0].action, "kill");
  EXPECT_GE(next[0].at_ns - after_restart, 50'000'000);
}

TEST(Nemesis, DueReturnsEachActionOnceAndPendingHeals) {
  NemesisOptions o;
  o.faults = {"pause"};
  o.interval_ms = 100;
  o.duration_ms = 40;
  Nemesis n(o, 1, 2);
  auto first = n.Due(1'000'000'000);
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(n.Due(first.back().at_ns).empty());
  // Step to just after the next pause: its resume is pending.
  std::vector<FaultAction> next;
  for (int64_t t = first.back().at_ns; next.empty(); t += 1'000'000) next = n.Due(t);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].action, "pause");
  auto pending = n.Pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].action, "resume");
  EXPECT_EQ(pending[0].node, next[0].node);
  // No faults, no schedule.
  Nemesis none(NemesisOptions(), 1, 2);
  EXPECT_TRUE(none.Due(1'000'000'000'000).empty());
}

TEST(Nemesis, OptionsThatWouldMakeFalseLivenessFindingsAreRefused) {
  NemesisOptions o;
  o.faults = {"pause"};
  EXPECT_TRUE(o.Check(5000).ok());
  o.duration_ms = 5000;
  EXPECT_TRUE(absl::IsInvalidArgument(o.Check(5000)));
  o.duration_ms = 300;
  o.faults = {"partition"};
  EXPECT_TRUE(o.Check(5000).ok());
  o.faults = {"flood"};
  EXPECT_TRUE(absl::IsInvalidArgument(o.Check(5000)));
  o.faults = {"pause"};
  o.interval_ms = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(o.Check(5000)));
}

// A swarm job keeps a non-empty subset of the faults, the same for the
// same seed; over many seeds every fault is both kept and dropped.
TEST(Nemesis, SwarmJobsKeepSeededNonEmptySubsetsOfTheFaults) {
  const std::vector<std::string> all = {"pause", "kill", "partition"};
  std::map<std::string, int> kept;
  std::set<std::vector<std::string>> subsets;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<std::string> s = SwarmFaults(all, seed);
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s, SwarmFaults(all, seed));
    for (const std::string& f : s) {
      ASSERT_NE(std::find(all.begin(), all.end(), f), all.end()) << f;
      ++kept[f];
    }
    subsets.insert(s);
  }
  for (const std::string& f : all) {
    EXPECT_GT(kept[f], 50) << f;
    EXPECT_LT(kept[f], 200) << f;
  }
  EXPECT_EQ(subsets.size(), 7u);  // every non-empty subset of 3
  EXPECT_EQ(SwarmFaults({"kill"}, 3), std::vector<std::string>{"kill"});
  EXPECT_TRUE(SwarmFaults({}, 3).empty());
}

// Which links each partition cuts, as a function of the event's node and
// the cluster size alone (so that a trace's event replays).
TEST(Faults, PartitionsCutTheLinksTheirNodeAndClusterSizeName) {
  using Links = std::vector<std::pair<int, int>>;
  EXPECT_EQ(harness::LinksCut("partition", 1, 3), (Links{{0, 1}, {1, 2}}));
  // 5 nodes: a minority of 2 from a majority of 3, from the event's node on.
  EXPECT_EQ(harness::LinksCut("split", 3, 5), (Links{{0, 3}, {0, 4}, {1, 3}, {1, 4}, {2, 3}, {2, 4}}));
  EXPECT_EQ(harness::LinksCut("split", 4, 5), (Links{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}}));
  // 3 nodes: a split is a partition of the event's node.
  EXPECT_EQ(harness::LinksCut("split", 2, 3), harness::LinksCut("partition", 2, 3));
  // A bridge: the others halved in ring order, the halves cut, the bridge
  // node reaching both.
  EXPECT_EQ(harness::LinksCut("bridge", 0, 5), (Links{{1, 3}, {1, 4}, {2, 3}, {2, 4}}));
  EXPECT_EQ(harness::LinksCut("bridge", 1, 5), (Links{{0, 2}, {0, 3}, {2, 4}, {3, 4}}));
  EXPECT_EQ(harness::LinksCut("bridge", 2, 3), (Links{{0, 1}}));
  // In every split of 5 or 7 nodes each side of a cut link is a
  // minority/majority, and no bridge cuts its own node's links.
  for (int n : {5, 7})
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(harness::LinksCut("split", k, n).size(), static_cast<size_t>(((n - 1) / 2) * (n - (n - 1) / 2)));
      for (const auto& [a, b] : harness::LinksCut("bridge", k, n)) {
        EXPECT_NE(a, k);
        EXPECT_NE(b, k);
      }
    }
  EXPECT_TRUE(harness::LinksCut("pause", 0, 3).empty());
  EXPECT_TRUE(harness::LinksCut("bridge", 0, 2).empty());  // too small
}

TEST(Faults, EveryFaultIsNamedAndHealedAndNeedsEnoughNodes) {
  EXPECT_EQ(NemesisFaults(), (std::vector<std::string>{"pause", "kill", "partition", "split", "bridge", "slow"}));
  EXPECT_EQ(harness::FaultActionNames(), "pause, resume, kill, restart, partition, heal, split, bridge, slow");
  for (const char* a : {"pause", "resume", "kill", "restart", "partition", "heal", "split", "bridge", "slow"})
    EXPECT_TRUE(harness::IsFaultAction(a)) << a;
  EXPECT_FALSE(harness::IsFaultAction("unpartition"));
  NemesisOptions o;
  o.faults = {"pause", "split"};
  EXPECT_TRUE(o.CheckNodes(3).ok());
  absl::Status small = o.CheckNodes(2);
  EXPECT_TRUE(absl::IsInvalidArgument(small));
  EXPECT_EQ(small.message(), "a split needs a cluster of at least 3 nodes (this one has 2)");
  EXPECT_TRUE(NeedsLinkRelays({"pause", "bridge"}));
  EXPECT_TRUE(NeedsLinkRelays({"slow"}));
  EXPECT_FALSE(NeedsLinkRelays({"pause", "kill"}));
  // A split's and a bridge's heal is "heal".
  auto s = Schedule(9, 2'000'000'000, {"split", "bridge"});
  ASSERT_GE(s.size(), 4u);
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    EXPECT_TRUE(s[i].action == "split" || s[i].action == "bridge") << s[i].action;
    EXPECT_EQ(s[i + 1].action, "heal");
    EXPECT_EQ(s[i + 1].node, s[i].node);
  }
}

}  // namespace
}  // namespace dualswarm::workers
