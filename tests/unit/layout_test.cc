// The dependency rules of docs/layout.md, enforced by reading every
// #include line of the product code: the engine is pure (no I/O libraries,
// nothing of the binaries around it), util/ depends on nothing of ours,
// workers/ and cli/ never reach into the coordinator, and only the
// coordinator's store talks to PostgreSQL; and tests/unit starts no
// process (those tests live in tests/process, tests/e2e, ...).
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

struct Include {
  std::string file;  // relative to the source root
  int line = 0;
  std::string target;  // what is included, without quotes or brackets
  bool angle = false;  // <...> rather than "..."
};

// Every #include of the .h/.cc files under root/dir.
std::vector<Include> IncludesUnder(const fs::path& root, const std::string& dir) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> out;
  for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    std::ifstream in(entry.path());
    std::string text;
    int n = 0;
    while (std::getline(in, text)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(text, m, kInclude)) continue;
      out.push_back({fs::relative(entry.path(), root).string(), n, m[2].str(), m[1].str() == "<"});
    }
  }
  return out;
}

// A folder's rule: quoted includes only from `allowed` folders; no angle
// include of a `forbidden` library.
struct Rule {
  std::string dir;
  std::vector<std::string> allowed;
  std::vector<std::string> forbidden;
};

// The includes under root/rule.dir that break the rule, one line each.
std::vector<std::string> Violations(const fs::path& root, const Rule& rule) {
  std::vector<std::string> out;
  for (const Include& i : IncludesUnder(root, rule.dir)) {
    const std::string where = absl::StrCat(i.file, ":", i.line, ": #include ", i.target);
    if (i.angle) {
      for (const auto& f : rule.forbidden)
        if (absl::StartsWith(i.target, f)) out.push_back(absl::StrCat(where, " (", rule.dir, " may not use ", f, ")"));
      continue;
    }
    bool ok = false;
    for (const auto& a : rule.allowed) ok = ok || absl::StartsWith(i.target, a);
    if (!ok)
      out.push_back(
          absl::StrCat(where, " (", rule.dir, " may include only from ", absl::StrJoin(rule.allowed, " "), ")"));
  }
  return out;
}

const fs::path kRoot(DUALSWARM_SOURCE_DIR);
const std::vector<std::string> kIoLibraries = {"grpc",    "grpcpp", "pqxx",       "google/protobuf", "prometheus",
                                               "openssl", "curl",   "sys/socket", "netinet"};
const std::vector<std::string> kServiceLibraries = {"grpc", "grpcpp", "pqxx", "google/protobuf", "prometheus"};

void ExpectNoViolations(const Rule& rule) {
  ASSERT_FALSE(IncludesUnder(kRoot, rule.dir).empty()) << "no sources found under " << rule.dir;
  for (const std::string& v : Violations(kRoot, rule)) ADD_FAILURE() << v;
}

TEST(Layout, EngineIsPure) { ExpectNoViolations({"engine", {"engine/", "absl/"}, kIoLibraries}); }

TEST(Layout, UtilDependsOnNothingOfOurs) { ExpectNoViolations({"util", {"util/", "absl/"}, kServiceLibraries}); }

TEST(Layout, WorkersNeverIncludeTheCoordinator) {
  ExpectNoViolations({"workers", {"workers/", "engine/", "util/", "absl/", "dualswarm/v1/", "proto/"}, {"pqxx"}});
}

TEST(Layout, CliNeverIncludesTheCoordinator) {
  ExpectNoViolations({"cli", {"cli/", "workers/", "engine/", "util/", "absl/", "dualswarm/v1/", "proto/"}, {"pqxx"}});
}

TEST(Layout, ProtoNamesDependOnlyOnTheProtos) {
  ExpectNoViolations({"proto", {"proto/", "dualswarm/v1/", "absl/"}, {"pqxx", "prometheus"}});
}

TEST(Layout, CoordinatorNeverIncludesTheCli) {
  ExpectNoViolations(
      {"services", {"services/", "workers/", "engine/", "util/", "absl/", "dualswarm/v1/", "proto/"}, {}});
}

TEST(Layout, OnlyTheStoreTalksToPostgres) {
  for (const std::string dir : {"engine", "util", "workers", "cli", "services"})
    for (const Include& i : IncludesUnder(kRoot, dir)) {
      if (i.angle && absl::StartsWith(i.target, "pqxx")) {
        EXPECT_TRUE(absl::StartsWith(i.file, "services/coordinator/store/"))
            << i.file << ":" << i.line << " (only services/coordinator/store/ may use libpqxx)";
      }
    }
}

// What in a unit test's text starts a process: the calls themselves, or
// the helpers that start SUTs and job children. One line each.
std::vector<std::string> ProcessStarts(const fs::path& root, const std::string& dir) {
  static const std::regex kStart(R"(\b(fork|vfork|posix_spawnp?|execv[pe]?|execl[pe]?|popen|system)\s*\()");
  static const std::regex kHelper(
      R"(#\s*include\s*"(tests/common/processes\.h|workers/sut/|workers/daemon/job_process\.h))");
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string text;
    for (int n = 1; std::getline(in, text); ++n)
      if (std::regex_search(text, kStart) || std::regex_search(text, kHelper))
        out.push_back(absl::StrCat(fs::relative(entry.path(), root).string(), ":", n, ": ", text));
  }
  return out;
}

TEST(Layout, UnitTestsStartNoProcess) {
  for (const std::string& v : ProcessStarts(kRoot, "tests/unit"))
    if (!absl::StartsWith(v, "tests/unit/layout_test.cc:"))  // its own probe below
      ADD_FAILURE() << v << " (a test that starts processes belongs in tests/process or tests/e2e)";
}

// The rules must be able to fail: an engine file that includes the store
// and libpqxx breaks the engine's rule twice.
TEST(Layout, ARuleCatchesAViolation) {
  const fs::path root = fs::path(testing::TempDir()) / "layout_probe";
  fs::remove_all(root);
  fs::create_directories(root / "engine" / "check");
  std::ofstream(root / "engine" / "check" / "probe.h")
      << "#include \"engine/ir/value.h\"\n#include \"services/coordinator/store/store.h\"\n"
         "  #  include <pqxx/pqxx>\n#include <vector>\n";
  std::vector<std::string> v = Violations(root, {"engine", {"engine/", "absl/"}, kIoLibraries});
  fs::remove_all(root);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(absl::StrContains(v[0], "engine/check/probe.h:2: #include services/coordinator/store/store.h")) << v[0];
  EXPECT_TRUE(absl::StrContains(v[1], "engine/check/probe.h:3: #include pqxx/pqxx")) << v[1];
}

// And the unit-test rule: a fork and a SUT launcher are caught, a file
// system call is not.
TEST(Layout, TheUnitTestRuleCatchesAProcess) {
  const fs::path root = fs::path(testing::TempDir()) / "layout_probe_unit";
  fs::remove_all(root);
  fs::create_directories(root / "tests" / "unit");
  std::ofstream(root / "tests" / "unit" / "probe_test.cc")
      << "#include \"workers/sut/launcher.h\"\nint x = file_system(1);\npid_t p = fork();\n";
  std::vector<std::string> v = ProcessStarts(root, "tests/unit");
  fs::remove_all(root);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(absl::StrContains(v[0], "probe_test.cc:1:")) << v[0];
  EXPECT_TRUE(absl::StrContains(v[1], "probe_test.cc:3:")) << v[1];
}

}  // namespace
