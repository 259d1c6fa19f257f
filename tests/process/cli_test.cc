// End-to-end tests of the `dualswarm` command-line tool (the real binary,
// DUALSWARM_CLI) on temporary spec and trace files: exit codes (0 accept /
// ok, 1 reject, 2 bad input), verdict text and JSON, error positions, and
// that nothing crashes (the exit status is always a normal exit 0/1/2).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace {

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const Result& r) {
  return os << "exit=" << r.exit_code << " signal=" << r.signal << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "dualswarm_cli_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf " + Quote(dir_)).c_str());
  }

  std::string Write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << content;
    return path;
  }
  std::string WriteLines(const std::string& name, std::initializer_list<std::string> lines) {
    return Write(name, absl::StrJoin(lines, "\n") + "\n");
  }

  // Runs the CLI with `args` (each shell-quoted); optional stdin text.
  Result Cli(const std::vector<std::string>& args, const std::string* stdin_text = nullptr) {
    std::string out_path = dir_ + "/stdout.txt", err_path = dir_ + "/stderr.txt";
    std::string cmd = Quote(DUALSWARM_CLI);
    for (const auto& a : args) cmd += " " + Quote(a);
    if (stdin_text) {
      cmd += " < " + Quote(Write("stdin.txt", *stdin_text));
    } else {
      cmd += " < /dev/null";
    }
    cmd += " > " + Quote(out_path) + " 2> " + Quote(err_path);
    int status = std::system(cmd.c_str());
    Result r;
    // std::system runs /bin/sh -c: a signal in the child shows up either as
    // WIFSIGNALED or as the shell's exit status 128+N.
    if (WIFSIGNALED(status)) {
      r.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
      if (r.exit_code > 128) {
        r.signal = r.exit_code - 128;
        r.exit_code = -1;
      }
    }
    r.out = Slurp(out_path);
    r.err = Slurp(err_path);
    // The contract: never a crash, exit codes are 0, 1 or 2 only.
    EXPECT_EQ(r.signal, 0) << "the CLI crashed: " << r;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << r;
    return r;
  }

  std::string KvSpec() const { return std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec"; }

  std::string dir_;
};

const char kPut1[] = R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"put","key":"k","value":"v1"}})";
const char kOk2[] = R"({"label":2,"conn":0,"dir":"received","msg":{"ok":true}})";
const char kPut3[] = R"({"label":3,"conn":0,"dir":"sent","msg":{"op":"put","key":"k","value":"v2"}})";
const char kOk4[] = R"({"label":4,"conn":0,"dir":"received","msg":{"ok":true}})";
const char kGet5[] = R"({"label":5,"conn":0,"dir":"sent","msg":{"op":"get","key":"k"}})";

// An explore run's finding is a violation in the spec, found with no SUT:
// replay refuses it before launching anything and says how to reproduce it.
TEST_F(CliTest, ReplayRefusesAnExploreFindingAndPointsToExplore) {
  const std::string cx = Write(
      "explore-cx.json",
      absl::StrCat(R"({"version":1,"spec":{"name":"kv","hash":"h","file":")", KvSpec(),
                   R"("},"target":"explore","adapter":"explore","seed":3,"connections":1,"max_in_flight":1,)",
                   R"("input":[{"conn":0,"jexpr":{"op":"get","key":"a"}}],"trace":[],)",
                   R"("verdict":{"kind":"spec-error","reason":"assertion failed"},"signature":"0123456789abcdef"})"));
  Result r = Cli({"replay", cx, "--launch", "/bin/false {port}"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "a violation in the spec itself")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat("dualswarm explore --spec ", KvSpec(), " --depth 1"))) << r.err;
}

TEST_F(CliTest, CheckAcceptsAnExplainedTrace) {
  std::string trace = WriteLines("ok.jsonl", {
                                                 "# a comment line and a blank line are skipped",
                                                 "",
                                                 kPut1,
                                                 kOk2,
                                                 kPut3,
                                                 kOk4,
                                                 kGet5,
                                                 R"({"label":6,"conn":0,"dir":"received","msg":{"value":"v2"}})",
                                             });
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, "ACCEPT")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "checked 6 observations")) << r;
}

TEST_F(CliTest, CheckAcceptsConcurrentClientsInSomeOrder) {
  // Two connections; the put on conn 1 is answered after the get on conn 0
  // sees its value, which is fine because the requests overlapped.
  std::string trace =
      WriteLines("conc.jsonl", {
                                   R"({"label":1,"conn":1,"dir":"sent","msg":{"op":"put","key":"k","value":"x"}})",
                                   R"({"label":3,"conn":0,"dir":"sent","msg":{"op":"get","key":"k"}})",
                                   R"({"label":4,"conn":0,"dir":"received","msg":{"value":"x"}})",
                                   R"({"label":2,"conn":1,"dir":"received","msg":{"ok":true}})",
                               });
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, "ACCEPT")) << r;
}

TEST_F(CliTest, CheckRejectsAStaleRead) {
  std::string trace = WriteLines("stale.jsonl", {
                                                    kPut1,
                                                    kOk2,
                                                    kPut3,
                                                    kOk4,
                                                    kGet5,
                                                    R"({"label":6,"conn":0,"dir":"received","msg":{"value":"v1"}})",
                                                });
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace});
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, "REJECT")) << r;
  EXPECT_TRUE(absl::StrContains(r.out, "\"v1\"")) << r;

  Result j = Cli({"check", "--spec", KvSpec(), "--trace", trace, "--json"});
  EXPECT_EQ(j.exit_code, 1) << j;
  EXPECT_TRUE(absl::StartsWith(j.out, R"({"verdict":"reject")")) << j;
  EXPECT_TRUE(absl::StrContains(j.out, R"("trace_line":6)")) << j;
  EXPECT_TRUE(absl::StrContains(j.out, R"("stats":{)")) << j;
  EXPECT_TRUE(absl::EndsWith(j.out, "}\n")) << j;
  // One line of JSON on stdout, nothing else.
  EXPECT_EQ(j.out.find('\n'), j.out.size() - 1) << j;
}

TEST_F(CliTest, JsonAcceptVerdict) {
  std::string trace = WriteLines("ok.jsonl", {kPut1, kOk2});
  Result r = Cli({"check", "--spec=" + KvSpec(), "--trace=" + trace, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, R"({"verdict":"accept")")) << r;
}

TEST_F(CliTest, NetworkSyncWorks) {
  // Under tcp the put on conn 1 may be served before the get on conn 0 even
  // though it was sent later; under sync requests are served in send order.
  std::string trace =
      WriteLines("order.jsonl", {
                                    R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"get","key":"k"}})",
                                    R"({"label":3,"conn":1,"dir":"sent","msg":{"op":"put","key":"k","value":"x"}})",
                                    R"({"label":4,"conn":1,"dir":"received","msg":{"ok":true}})",
                                    R"({"label":2,"conn":0,"dir":"received","msg":{"value":"x"}})",
                                });
  Result tcp = Cli({"check", "--spec", KvSpec(), "--trace", trace, "--network", "tcp"});
  EXPECT_EQ(tcp.exit_code, 0) << tcp;
  Result sync = Cli({"check", "--spec", KvSpec(), "--trace", trace, "--network", "sync"});
  EXPECT_EQ(sync.exit_code, 1) << sync;
  EXPECT_TRUE(absl::StartsWith(sync.out, "REJECT")) << sync;
  // A sequential trace is accepted under sync too.
  std::string seq =
      WriteLines("seq.jsonl", {kPut1, kOk2, kGet5, R"({"label":6,"conn":0,"dir":"received","msg":{"value":"v1"}})"});
  Result ok = Cli({"check", "--spec", KvSpec(), "--trace", seq, "--network=sync"});
  EXPECT_EQ(ok.exit_code, 0) << ok;
}

// --nodes/--connect: where the trace's connections went, which is what
// node_of(c) answers (specs/redis.dspec: node 0 the primary, the others
// replicas, which refuse writes).
TEST_F(CliTest, NodesSayWhereConnectionsWent) {
  std::string redis = std::string(DUALSWARM_SOURCE_DIR) + "/specs/redis.dspec";
  std::string trace = WriteLines(
      "replica.jsonl", {
                           R"({"label":1,"conn":1,"dir":"sent","msg":{"cmd":["SET","k","a"]}})",
                           R"({"label":2,"conn":1,"dir":"received","msg":{"err":"READONLY You can't write"}})",
                       });
  Result one = Cli({"check", "--spec", redis, "--trace", trace});
  EXPECT_EQ(one.exit_code, 1) << one;  // one server: a SET answers OK
  Result two = Cli({"check", "--spec", redis, "--trace", trace, "--nodes", "2"});
  EXPECT_EQ(two.exit_code, 0) << two;  // connection 1 talks to replica 1
  Result primary = Cli({"check", "--spec", redis, "--trace", trace, "--nodes", "2", "--connect", "0"});
  EXPECT_EQ(primary.exit_code, 1) << primary;
  Result bad = Cli({"check", "--spec", redis, "--trace", trace, "--nodes", "2", "--connect", "2"});
  EXPECT_EQ(bad.exit_code, 2) << bad;
  EXPECT_TRUE(absl::StrContains(bad.err, "--connect must be round-robin or a node's number (0 to 1)")) << bad;
  Result many = Cli({"check", "--spec", redis, "--trace", trace, "--nodes", "17"});
  EXPECT_EQ(many.exit_code, 2) << many;
}

TEST_F(CliTest, UnknownNetworkModel) {
  std::string trace = WriteLines("ok.jsonl", {kPut1, kOk2});
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace, "--network", "carrier-pigeon"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "unknown network model")) << r;
}

TEST_F(CliTest, TraceFromStdin) {
  std::string text = absl::StrCat(kPut1, "\n", kOk2, "\n");
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", "-"}, &text);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, "ACCEPT")) << r;
  std::string bad = absl::StrCat(kPut1, "\n{oops\n");
  Result b = Cli({"check", "--spec", KvSpec(), "--trace", "-"}, &bad);
  EXPECT_EQ(b.exit_code, 2) << b;
  EXPECT_TRUE(absl::StrContains(b.err, "<stdin>:2:2:")) << b;
}

TEST_F(CliTest, MalformedTraceLineIsPointedAt) {
  std::string trace = WriteLines("bad.jsonl", {
                                                  kPut1,
                                                  kOk2,
                                                  R"({"label":3,"conn":0,"dir":"sent","msg":{"op":"get","key":"k",}})",
                                                  kOk4,
                                              });
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.err, trace + ":3:")) << r;
  // The column of the offending '}' after the trailing comma.
  EXPECT_TRUE(absl::StrContains(r.err, trace + ":3:62: expected a string key")) << r;
  EXPECT_TRUE(r.out.empty()) << r;
}

TEST_F(CliTest, BadObservationFieldsArePointedAt) {
  struct Case {
    std::string line;
    std::string want;
  };
  const std::vector<Case> cases = {
      {R"({"label":2,"conn":0,"dir":"sent","msg":{}})", ":2:1: a sent request must have an odd label"},
      {R"({"label":1,"conn":0,"dir":"sideways","msg":{}})", ":2:1: field \"dir\" must be"},
      {R"({"label":1,"conn":0,"dir":"sent"})", ":2:1: missing field \"msg\""},
      {R"({"label":"1","conn":0,"dir":"sent","msg":{}})", ":2:1: field \"label\" must be an integer"},
      {R"({"label":1,"dir":"sent","msg":{}})", ":2:1: missing field \"conn\""},
      {R"([1,2])", ":2:1: an observation must be a JSON object"},
      {R"({"event":"exploded","conn":0})", ":2:1: unknown event"},
      {R"({"label":1.5,"conn":0,"dir":"sent","msg":{}})", ":2:11: fractional"},
      {R"({"label":3,"conn":0,"dir":"sent","msg":{}} trailing)", ":2:44: unexpected text after the JSON value"},
  };
  for (const auto& c : cases) {
    std::string trace = WriteLines("fields.jsonl", {"# header", c.line});
    Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace});
    EXPECT_EQ(r.exit_code, 2) << c.line << "\n" << r;
    EXPECT_TRUE(absl::StrContains(r.err, trace + c.want)) << "want " << c.want << "\n" << r;
  }
}

TEST_F(CliTest, LabelInconsistenciesAreBadInput) {
  // The response to label 1 must carry label 2.
  std::string wrong = WriteLines("wrong.jsonl", {
                                                    kPut1,
                                                    R"({"label":4,"conn":0,"dir":"received","msg":{"ok":true}})",
                                                });
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", wrong});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "line 2")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "expected label 2")) << r;

  // A response on a connection with nothing outstanding.
  std::string orphan = WriteLines("orphan.jsonl", {
                                                      kPut1,
                                                      R"({"label":2,"conn":5,"dir":"received","msg":{"ok":true}})",
                                                  });
  Result o = Cli({"check", "--spec", KvSpec(), "--trace", orphan});
  EXPECT_EQ(o.exit_code, 2) << o;
  EXPECT_TRUE(absl::StrContains(o.err, "line 2")) << o;
  EXPECT_TRUE(absl::StrContains(o.err, "no request is outstanding")) << o;

  // The same label twice.
  std::string dup = WriteLines("dup.jsonl", {kPut1, kOk2, kPut1});
  Result d = Cli({"check", "--spec", KvSpec(), "--trace", dup});
  EXPECT_EQ(d.exit_code, 2) << d;
  EXPECT_TRUE(absl::StrContains(d.err, "line 3")) << d;
  EXPECT_TRUE(absl::StrContains(d.err, "label 1 is used twice")) << d;
}

TEST_F(CliTest, MalformedSpecIsBadInputWithPosition) {
  std::string spec = Write("broken.dspec",
                           "spec broken;\n"
                           "on recv q from c {\n"
                           "  send c { v: nope };\n"
                           "  let x = len(1, 2);\n"
                           "}\n");
  std::string trace = WriteLines("ok.jsonl", {kPut1, kOk2});
  Result r = Cli({"check", "--spec", spec, "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.err, spec + ":3:15: unknown name 'nope'")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, spec + ":4:11: 'len' takes 1 argument(s), got 2")) << r;
  EXPECT_TRUE(r.out.empty()) << r;

  std::string syntax = Write("syntax.dspec", "spec s;\nvar x = 1\non recv q from c { send c {}; }\n");
  Result s = Cli({"check", "--spec", syntax, "--trace", trace});
  EXPECT_EQ(s.exit_code, 2) << s;
  EXPECT_TRUE(absl::StrContains(s.err, syntax + ":3:1: expected ';'")) << s;
}

TEST_F(CliTest, SpecErrorAtRunTimeIsExit2) {
  std::string spec = Write("div.dspec",
                           "spec div;\n"
                           "on recv q from c {\n"
                           "  send c { v: 10 / q.n };\n"
                           "}\n");
  std::string trace = WriteLines("t.jsonl", {
                                                R"({"label":1,"conn":0,"dir":"sent","msg":{"n":0}})",
                                                R"({"label":2,"conn":0,"dir":"received","msg":{"v":1}})",
                                            });
  Result r = Cli({"check", "--spec", spec, "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, spec + ":3:18: division by zero")) << r;
  Result j = Cli({"check", "--spec", spec, "--trace", trace, "--json"});
  EXPECT_EQ(j.exit_code, 2) << j;
  EXPECT_TRUE(absl::StartsWith(j.out, R"({"verdict":"spec-error")")) << j;
}

TEST_F(CliTest, HostileInputsDoNotCrash) {
  // Each of these used to kill the process (SIGSEGV / SIGFPE).
  std::string trace = WriteLines("t.jsonl", {
                                                R"({"label":1,"conn":0,"dir":"sent","msg":{"n":-9223372036854775808}})",
                                                R"({"label":2,"conn":0,"dir":"received","msg":{"v":1}})",
                                            });
  std::string ovf = Write("ovf.dspec", "spec o;\non recv q from c { send c { v: q.n / -1 }; }\n");
  Result r = Cli({"check", "--spec", ovf, "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, "integer overflow")) << r;

  std::string let_init = Write("let.dspec",
                               "spec l;\nvar x = { let a = 1; a + 1 };\n"
                               "on recv q from c { send c { v: x }; }\n");
  Result l = Cli({"lint", "--spec", let_init});
  EXPECT_EQ(l.exit_code, 0) << l;

  std::string deep = "spec d;\nvar x = " + std::string(100000, '(') + "1" + std::string(100000, ')') +
                     ";\non recv q from c { send c {}; }\n";
  Result d = Cli({"lint", "--spec", Write("deep.dspec", deep)});
  EXPECT_EQ(d.exit_code, 2) << d;

  std::string deep_json = std::string(100000, '[') + std::string(100000, ']');
  std::string deep_trace = WriteLines("deep.jsonl", {deep_json});
  Result dj = Cli({"check", "--spec", KvSpec(), "--trace", deep_trace});
  EXPECT_EQ(dj.exit_code, 2) << dj;
  EXPECT_TRUE(absl::StrContains(dj.err, "nesting deeper than 256")) << dj;

  std::string binary = Write("bin.jsonl", std::string("\x00\xff\xfe{\"a\n", 7));
  Result b = Cli({"check", "--spec", KvSpec(), "--trace", binary});
  EXPECT_EQ(b.exit_code, 2) << b;

  Result e = Cli({"check", "--spec", KvSpec(), "--trace", Write("empty.jsonl", "")});
  EXPECT_EQ(e.exit_code, 0) << e;  // nothing observed, nothing to explain
}

TEST_F(CliTest, FlagErrors) {
  std::string trace = WriteLines("ok.jsonl", {kPut1, kOk2});
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{"check", "--spec", KvSpec(), "--trace", trace, "--bogus"}, "unknown option '--bogus'"},
      {{"check", "--spec", KvSpec()}, "check needs --spec and --trace"},
      {{"check", "--trace", trace}, "check needs --spec and --trace"},
      {{"check"}, "check needs --spec and --trace"},
      {{"check", "--spec"}, "option '--spec' needs a value"},
      {{"check", "--spec", KvSpec(), "--trace", trace, "stray"}, "unexpected argument 'stray'"},
      {{"check", "--spec", KvSpec(), "--trace", trace, "--max-frontier", "0"}, "--max-frontier"},
      {{"check", "--spec", KvSpec(), "--trace", trace, "--max-frontier", "lots"}, "--max-frontier"},
      {{"check", "--spec", KvSpec(), "--trace", trace, "--max-steps", "-1"}, "--max-steps"},
      {{"check", "--spec", "/nonexistent.dspec", "--trace", trace}, "/nonexistent.dspec"},
      {{"check", "--spec", KvSpec(), "--trace", "/nonexistent.jsonl"}, "/nonexistent.jsonl"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{}, "usage: dualswarm"},
      {{"lint"}, "usage: dualswarm lint --spec FILE"},
      {{"lint", "--spec", KvSpec(), "--json"}, "unknown option '--json'"},
  };
  for (const auto& c : cases) {
    Result r = Cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(c.args, " ") << "\n" << r;
    EXPECT_TRUE(absl::StrContains(r.err, c.want)) << "want " << c.want << "\n" << r;
    EXPECT_TRUE(r.out.empty()) << r;
  }
}

TEST_F(CliTest, Help) {
  Result top = Cli({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top;
  EXPECT_TRUE(absl::StrContains(top.out, "usage: dualswarm COMMAND")) << top;
  Result check = Cli({"check", "--help"});
  EXPECT_EQ(check.exit_code, 0) << check;
  EXPECT_TRUE(absl::StrContains(check.out, "usage: dualswarm check")) << check;
}

// Every command and every subcommand of the remote commands answers --help
// and -h with its usage on stdout and exit 0 (`dualswarm lint --help` was an
// error). Remote commands answer without a coordinator.
TEST_F(CliTest, EveryCommandAnswersHelp) {
  const std::vector<std::vector<std::string>> commands = {
      {"check"},
      {"test"},
      {"replay"},
      {"lint"},
      {"help"},
      {"spec"},
      {"spec", "push"},
      {"spec", "list"},
      {"spec", "show"},
      {"target"},
      {"target", "add"},
      {"target", "list"},
      {"run"},
      {"run", "submit"},
      {"run", "list"},
      {"run", "show"},
      {"run", "watch"},
      {"run", "cancel"},
      {"finding"},
      {"finding", "list"},
      {"finding", "show"},
      {"campaign"},
      {"campaign", "create"},
      {"campaign", "list"},
      {"campaign", "show"},
      {"campaign", "pause"},
      {"campaign", "resume"},
      {"campaign", "delete"},
  };
  for (const auto& cmd : commands) {
    for (const char* flag : {"--help", "-h"}) {
      std::vector<std::string> args = cmd;
      if (cmd[0] != "help") args.push_back(flag);
      Result r = Cli(args);
      std::string what = absl::StrJoin(args, " ");
      EXPECT_EQ(r.exit_code, 0) << what << "\n" << r;
      EXPECT_TRUE(absl::StrContains(r.out, "usage: dualswarm")) << what << "\n" << r;
      EXPECT_TRUE(r.err.empty()) << what << "\n" << r;
    }
  }
}

// A feature mask entry for a site the spec does not have was ignored: the
// run tested with nothing switched off. It is refused, naming the sites.
TEST_F(CliTest, FeatureMaskForAMissingSiteIsRefused) {
  Result r = Cli({"test", "--spec", KvSpec(), "--target", "127.0.0.1:1", "--feature-mask", "1:c,7:1"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "spec 'kv' has no choice site 7; its sites (0-1):")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "site 1: ")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "(oneof in gen request), 4 alternatives (bits 0-3)")) << r;
}

TEST_F(CliTest, MaxStepsBoundIsInconclusiveNotAccept) {
  std::string trace = WriteLines("ok.jsonl", {kPut1, kOk2, kPut3, kOk4});
  Result r = Cli({"check", "--spec", KvSpec(), "--trace", trace, "--max-steps", "1"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_TRUE(absl::StartsWith(r.out, "INCONCLUSIVE")) << r;
}

TEST_F(CliTest, LintWorks) {
  Result r = Cli({"lint", "--spec", KvSpec()});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(absl::StrContains(r.out, "spec 'kv' OK")) << r;
  EXPECT_TRUE(absl::StrContains(r.out, "1 vars, 1 functions, 1 generators")) << r;

  std::string bad = Write("bad.dspec",
                          "spec bad;\n"
                          "var x: strnig = 1;\n"
                          "on recv q from c {\n"
                          "  send c { v: oneof { 1, 2 } };\n"
                          "}\n");
  Result b = Cli({"lint", "--spec=" + bad});
  EXPECT_EQ(b.exit_code, 2) << b;
  EXPECT_TRUE(absl::StrContains(b.err, bad + ":2:8: unknown type 'strnig'")) << b;
  EXPECT_TRUE(absl::StrContains(b.err, bad + ":4:15: `oneof` is only allowed in `gen` blocks")) << b;
  EXPECT_TRUE(b.out.empty()) << b;

  Result missing = Cli({"lint", "--spec", dir_ + "/nope.dspec"});
  EXPECT_EQ(missing.exit_code, 2) << missing;
  EXPECT_TRUE(absl::StrContains(missing.err, "nope.dspec")) << missing;
}

}  // namespace
