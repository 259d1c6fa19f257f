// Real synchronizers from Debian through the fs adapter
// (docs/real-servers.md): Unison against specs/filesync.dspec, two local
// replicas in batch mode with its fast check on and off; rsync against
// specs/mirror.dspec, as `rsync -a --delete A/ B/` keeps a mirror, and
// mistaken command lines of it found.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/harness/shrinker.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::workers {
namespace {

// tests/real/unison_sync.sh: Unison keeps its archive in the job's
// directory, so every job starts from an empty archive.
std::string UnisonLaunch(bool fastcheck) {
  return absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/unison_sync.sh {a} {b} {dir} ",
                      fastcheck ? "true" : "false");
}

// `ops` on connection 0, each sent after the previous one's answer.
std::vector<harness::InputItem> OneAfterAnother(const std::vector<ir::Value>& ops) {
  std::vector<harness::InputItem> input;
  for (const ir::Value& op : ops) input.push_back({.conn = 0, .jexpr = op});
  return harness::OneAtATime(input);
}

// Whether the job's last run that exited 2 printed `text`.
bool LastExit2Says(const JobResult& r, const std::string& text) {
  bool says = false;
  for (const auto& obs : r.trace)
    if (const ir::Value* e = obs.msg.is_map() ? obs.msg.Find("exit") : nullptr; e != nullptr && *e == ir::Value::Int(2))
      says = obs.msg.Find("output")->as_string().find(text) != std::string::npos;
  return says;
}

void ExpectUnisonPasses(bool fastcheck) {
  ASSERT_EQ(std::system("unison -version >/dev/null 2>&1"), 0) << "unison is not installed (scripts/setup.sh)";
  auto spec = Shipped("filesync.dspec");
  ASSERT_NE(spec, nullptr);
  testing::FsRuns all;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, testing::JobOptionsFor(UnisonLaunch(fastcheck), "fs", seed, 200));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    testing::FsRuns u = testing::FsRunsOf(r->trace);
    all.clean += u.clean;
    all.not_clean += u.not_clean;
  }
  EXPECT_GE(all.clean, 25u) << "Unison ran; not clean: " << all.not_clean;
  EXPECT_GE(all.not_clean, 5u) << "the runs met conflicts; clean: " << all.clean;
}

TEST(RealSync, UnisonWithItsFastCheckKeepsTheReconciliationContract) { ExpectUnisonPasses(true); }

TEST(RealSync, UnisonWithoutItsFastCheckKeepsTheReconciliationContract) { ExpectUnisonPasses(false); }

// Unison's documented fast-check miss (docs/real-servers.md, finding 1),
// replayed as found: b's file rewritten with its old size and time looks
// unchanged, so Unison goes to copy a's version over it, its check just
// before copying fails the copy (exit 2), and it leaves a temporary file.
// The spec allows both; the trace must show the failed copy.
TEST(RealSync, UnisonsFastCheckMissIsAllowed) {
  auto spec = Shipped("filesync.dspec");
  ASSERT_NE(spec, nullptr);
  auto str = [](const char* s) { return ir::Value::String(s); };
  auto on = [&](const char* op, const char* replica, const char* path) {
    return ir::MapEntries{{"op", str(op)}, {"replica", str(replica)}, {"path", str(path)}};
  };
  auto with = [](ir::MapEntries e, const char* k, ir::Value v) {
    e.push_back({k, std::move(v)});
    return ir::Value::Map(std::move(e));
  };
  const ir::Value run = ir::Value::Map({{"op", str("run")}});
  auto list = [&](const char* r) {
    return ir::Value::Map({{"op", str("list")},
                           {"replica", str(r)},
                           {"ignore", ir::Value::List({str(".*.tmp")})},
                           {"modes", ir::Value::Bool(true)}});
  };
  std::vector<ir::Value> ops = {with(on("write", "b", "d"), "data", str("2")),
                                with(on("touch", "b", "d"), "mtime", ir::Value::Int(1)),
                                run,
                                list("a"),
                                list("b"),
                                with(on("write", "b", "d"), "data", str("1")),            // same size, same inode
                                with(on("write", "a", "d"), "data", str("1")),            // the same change in a
                                with(on("touch", "b", "d"), "mtime", ir::Value::Int(1)),  // b's old time
                                run,
                                list("a"),
                                list("b")};
  JobOptions o = testing::JobOptionsFor(UnisonLaunch(true), "fs", 1, ops.size());
  o.exec.replay = OneAfterAnother(ops);
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
  EXPECT_TRUE(LastExit2Says(*r, "Destination updated")) << testing::DescribeJobResult(*r);
}

// Unison run as an unprivileged user (docs/real-servers.md, finding 3, a
// defect): a directory made 0500 with a new entry in it gets its new mode
// in the other replica first, and then the entry cannot be created there
// ("Permission denied", exit 2) — on every later sync too. The spec rejects
// the replica that holds the directory's new mode without its entry.
TEST(RealSync, UnisonAsAnUnprivilegedUserLosesAnEntryOfADirectoryItMadeReadOnly) {
  ASSERT_EQ(::geteuid(), 0) << "running the program as nobody needs the tests to run as root (README)";
  auto spec = Shipped("filesync.dspec");
  ASSERT_NE(spec, nullptr);
  auto str = [](const char* s) { return ir::Value::String(s); };
  auto op = [&](const char* name, const char* replica, const char* path) {
    return ir::Value::Map({{"op", str(name)}, {"replica", str(replica)}, {"path", str(path)}});
  };
  const ir::Value run = ir::Value::Map({{"op", str("run")}});
  auto list = [&](const char* r) {
    return ir::Value::Map({{"op", str("list")},
                           {"replica", str(r)},
                           {"ignore", ir::Value::List({str(".*.tmp")})},
                           {"modes", ir::Value::Bool(true)}});
  };
  std::vector<ir::Value> ops = {
      op("mkdir", "a", "d"),   run, list("a"), list("b"), op("chmod", "a", "d").Set("mode", ir::Value::Int(0500)),
      op("mkdir", "a", "d/s"), run, list("a"), list("b")};
  JobOptions o = testing::JobOptionsFor(UnisonLaunch(false), "fs", 1, ops.size());
  o.adapter_config.fs_user = "nobody";
  o.exec.replay = OneAfterAnother(ops);
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
  EXPECT_TRUE(LastExit2Says(*r, "Permission denied")) << testing::DescribeJobResult(*r);
}

// tests/real/rsync_mirror.sh: `rsync -a --delete A/ B/`.
std::string RsyncMirror() { return absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/rsync_mirror.sh {a} {b}"); }

TEST(RealSync, RsyncKeepsTheMirrorContract) {
  ASSERT_EQ(std::system("rsync --version >/dev/null 2>&1"), 0) << "rsync is not installed (scripts/setup.sh)";
  auto spec = Shipped("mirror.dspec");
  ASSERT_NE(spec, nullptr);
  testing::FsRuns all;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, testing::JobOptionsFor(RsyncMirror(), "fs", seed, 200));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    all.clean += testing::FsRunsOf(r->trace).clean;
  }
  EXPECT_GE(all.clean, 50u) << "rsync ran";
}

// Command lines that do not keep a mirror: without --delete (b keeps what
// a lost), without -l (links are skipped), without the trailing slash (a
// is copied into b as b/a), with --existing (new files are not copied).
// Each is found in the first seed and shrinks to at most 4 operations that
// replay.
TEST(RealSync, RsyncCommandLinesThatKeepNoMirrorAreFound) {
  auto spec = Shipped("mirror.dspec");
  ASSERT_NE(spec, nullptr);
  for (const char* launch : {"rsync -a {a}/ {b}/", "rsync -r --delete {a}/ {b}/", "rsync -a --delete {a} {b}/",
                             "rsync -a --delete --existing {a}/ {b}/"}) {
    JobOptions o = testing::JobOptionsFor(launch, "fs", 1, 200);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kSafety) << launch << ": " << testing::DescribeJobResult(*r);
    auto cx = MakeCounterexample(spec, o, *r, testing::DeterministicShrink(300));
    ASSERT_TRUE(cx.ok()) << cx.status();
    EXPECT_LE(cx->input.size(), 4u) << launch;
    EXPECT_EQ(cx->replays_reproduced, cx->replays_verified) << launch;
  }
}

}  // namespace
}  // namespace dualswarm::workers
