// `dualswarm test --json` prints one document shape for every verdict: a
// pass and a finding have the same top-level keys — verdict kind, seconds,
// request count, checker statistics — and a finding's counterexample is its
// "counterexample" field (null otherwise). A script that read doc["kind"]
// broke on findings, which printed the bare counterexample document.
// Both also carry the spec coverage the run reached.
// (The project's JSON reader takes integers only, so the document is read
// here with a small scanner of one object level.)
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tests/common/processes.h"

namespace dualswarm {
namespace {

// The members of the JSON object `s` as raw value texts, by key; empty when
// `s` is not one object.
std::map<std::string, std::string> Members(absl::string_view s) {
  std::map<std::string, std::string> out;
  s = absl::StripAsciiWhitespace(s);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return out;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t key_start = 0, value_start = 0;
  std::string key;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"') {
        in_string = false;
        if (depth == 1 && key.empty() && value_start == 0) key = std::string(s.substr(key_start, i - key_start));
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      if (depth == 1 && key.empty()) key_start = i + 1;
    } else if (c == ':' && depth == 1 && value_start == 0) {
      value_start = i + 1;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 1) {
      --depth;
    } else if ((c == ',' || c == '}') && depth == 1) {
      if (!key.empty()) out[key] = std::string(absl::StripAsciiWhitespace(s.substr(value_start, i - value_start)));
      key.clear();
      value_start = 0;
    }
  }
  return out;
}

struct Doc {
  int exit_code = -1;
  std::map<std::string, std::string> json;
  std::string raw;
};

Doc TestJson(int mutant) {
  auto r =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec",
                           "--launch", absl::StrCat(DS_REF_KV, " --port {port} --dir {dir} --mutant ", mutant),
                           "--seed", "7", "--steps", "300", "--connections", "2", "--shrink-time", "20", "--json"});
  return Doc{r.exit_code, Members(r.out), r.out + r.err};
}

std::set<std::string> Keys(const std::map<std::string, std::string>& m) {
  std::set<std::string> keys;
  for (const auto& [k, _] : m) keys.insert(k);
  return keys;
}

void ExpectCommonFields(const Doc& d, const std::string& kind) {
  ASSERT_FALSE(d.json.empty()) << d.raw;
  EXPECT_EQ(d.json.count("kind") ? d.json.at("kind") : "", absl::StrCat("\"", kind, "\"")) << d.raw;
  for (const char* f : {"seconds", "requests", "sent", "received", "checker", "verdict", "input", "trace",
                        "counterexample", "spec", "seed"})
    EXPECT_EQ(d.json.count(f), 1u) << f << " missing: " << d.raw;
  int requests = 0;
  EXPECT_TRUE(absl::SimpleAtoi(d.json.count("requests") ? d.json.at("requests") : "", &requests));
  EXPECT_GT(requests, 0);
  auto checker = Members(d.json.count("checker") ? d.json.at("checker") : "");
  for (const char* f : {"spec_steps", "backtracks", "partitions", "solver_checks", "z3_calls", "memo_hits", "restarts",
                        "repairs", "check_seconds", "max_observe_seconds"})
    EXPECT_EQ(checker.count(f), 1u) << "checker." << f;
  // Spec coverage (docs/coverage.md): some of kv.dspec's branches, never
  // more than it has, with the ones left listed.
  auto coverage = Members(d.json.count("coverage") ? d.json.at("coverage") : "");
  int covered = -1, total = -1;
  EXPECT_TRUE(absl::SimpleAtoi(coverage.count("covered") ? coverage.at("covered") : "", &covered)) << d.raw;
  EXPECT_TRUE(absl::SimpleAtoi(coverage.count("total") ? coverage.at("total") : "", &total)) << d.raw;
  EXPECT_GT(covered, 0) << d.raw;
  EXPECT_LE(covered, total) << d.raw;
  EXPECT_EQ(coverage.count("branches"), 1u) << d.raw;
  EXPECT_EQ(coverage.count("uncovered"), 1u) << d.raw;
}

TEST(TestJsonTest, PassAndFindingHaveTheSameShape) {
  Doc pass = TestJson(0);
  EXPECT_EQ(pass.exit_code, 0) << pass.raw;
  ExpectCommonFields(pass, "passed");
  EXPECT_EQ(pass.json["counterexample"], "null") << pass.raw;

  Doc finding = TestJson(4);  // append prepends
  EXPECT_EQ(finding.exit_code, 1) << finding.raw;
  ExpectCommonFields(finding, "safety");
  auto cx = Members(finding.json["counterexample"]);
  EXPECT_EQ(cx.count("signature"), 1u) << finding.raw;
  EXPECT_EQ(cx.count("input"), 1u) << finding.raw;
  EXPECT_EQ(cx.count("version"), 1u) << "the --save document, whole";

  EXPECT_EQ(absl::StrJoin(Keys(pass.json), ","), absl::StrJoin(Keys(finding.json), ","))
      << "one shape for every verdict";
}

}  // namespace
}  // namespace dualswarm
