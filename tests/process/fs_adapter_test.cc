// The fs adapter (workers/adapters/fs_adapter.h; a process test: a run
// starts /bin/sh): operations on replicas answer as the file system did,
// paths cannot leave their replica, bounds are errors naming them, and a
// run reports its exit status or its timeout.
#include "workers/adapters/fs_adapter.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

class FsAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ds-fs-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<Adapter> Make(const std::string& command, int timeout_ms = 5000) {
    FsConfig c;
    c.root = root_;
    c.command = command;
    c.run_timeout_ms = timeout_ms;
    c.limits.max_entries = 5;
    auto a = MakeFsAdapter(c);
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() ? std::move(*a) : nullptr;
  }

  // Sends one request and returns its answer (or the Send error).
  absl::StatusOr<Value> Ask(Adapter* a, Value q) {
    if (absl::Status s = a->Send(0, q); !s.ok()) return s;
    std::vector<AdapterEvent> events;
    if (absl::Status s = a->Poll(0, &events); !s.ok()) return s;
    if (events.size() != 1) return absl::InternalError("expected one answer");
    return events[0].msg;
  }

  static Value Op(const std::string& op, const std::string& replica, const std::string& path = "") {
    ir::MapEntries e = {{"op", Value::String(op)}, {"replica", Value::String(replica)}};
    if (!path.empty()) e.push_back({"path", Value::String(path)});
    return Value::Map(std::move(e));
  }

  std::string root_;
};

TEST_F(FsAdapterTest, OperationsAnswerAsTheFileSystemDid) {
  auto a = Make("true");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*Ask(a.get(), Op("mkdir", "a", "d")), Value::Map({{"ok", Value::Bool(true)}}));
  EXPECT_EQ(*Ask(a.get(), Op("mkdir", "a", "d")), Value::Map({{"error", Value::String("EEXIST")}}));
  EXPECT_EQ(*Ask(a.get(), Op("write", "a", "d/f").Set("data", Value::String("xy"))),
            Value::Map({{"ok", Value::Bool(true)}}));
  EXPECT_EQ(*Ask(a.get(), Op("write", "a", "e/f").Set("data", Value::String("xy"))),
            Value::Map({{"error", Value::String("ENOENT")}}));
  EXPECT_EQ(*Ask(a.get(), Op("write", "a", "g").Set("data", Value::String("z")).Set("via", Value::String("rename"))),
            Value::Map({{"ok", Value::Bool(true)}}));
  auto tree = Ask(a.get(), Op("list", "a"));
  ASSERT_TRUE(tree.ok()) << tree.status();
  const std::vector<Value>& l = tree->Find("tree")->as_list();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], Value::Map({{"kind", Value::String("dir")}, {"path", Value::String("d")}}));
  EXPECT_EQ(
      l[1],
      Value::Map({{"data", Value::String("xy")}, {"kind", Value::String("file")}, {"path", Value::String("d/f")}}));
  EXPECT_EQ(l[2].Find("path")->as_string(), "g");
  // A list may leave out names matching a pattern, and what is under them.
  auto some = Ask(a.get(), Op("list", "a").Set("ignore", Value::List({Value::String("d")})));
  ASSERT_TRUE(some.ok()) << some.status();
  ASSERT_EQ(some->Find("tree")->as_list().size(), 1u);
  EXPECT_EQ(some->Find("tree")->as_list()[0].Find("path")->as_string(), "g");
  EXPECT_TRUE(absl::IsInvalidArgument(Ask(a.get(), Op("list", "a").Set("ignore", Value::String("d"))).status()));
  EXPECT_EQ(*Ask(a.get(), Op("delete", "a", "d")), Value::Map({{"ok", Value::Bool(true)}}));
  EXPECT_EQ(*Ask(a.get(), Op("delete", "a", "d")), Value::Map({{"error", Value::String("ENOENT")}}));
  EXPECT_EQ(Ask(a.get(), Op("list", "b"))->Find("tree")->as_list().size(), 0u);
}

TEST_F(FsAdapterTest, AppendRmdirRenameSymlinkAndChmod) {
  auto a = Make("true");
  ASSERT_NE(a, nullptr);
  const Value ok = Value::Map({{"ok", Value::Bool(true)}});
  auto error = [](const char* e) { return Value::Map({{"error", Value::String(e)}}); };
  EXPECT_EQ(*Ask(a.get(), Op("append", "a", "f").Set("data", Value::String("x"))), error("ENOENT"));  // never creates
  ASSERT_EQ(*Ask(a.get(), Op("write", "a", "f").Set("data", Value::String("x"))), ok);
  EXPECT_EQ(*Ask(a.get(), Op("append", "a", "f").Set("data", Value::String("yz"))), ok);
  ASSERT_EQ(*Ask(a.get(), Op("mkdir", "a", "d")), ok);
  ASSERT_EQ(*Ask(a.get(), Op("write", "a", "d/p").Set("data", Value::String(""))), ok);
  EXPECT_EQ(*Ask(a.get(), Op("rmdir", "a", "d")), error("ENOTEMPTY"));
  EXPECT_EQ(*Ask(a.get(), Op("rename", "a", "d").Set("to", Value::String("d/q"))), error("EINVAL"));
  EXPECT_EQ(*Ask(a.get(), Op("rename", "a", "d").Set("to", Value::String("e"))), ok);  // with d/p
  EXPECT_EQ(*Ask(a.get(), Op("symlink", "a", "l").Set("target", Value::String("e/p"))), ok);
  EXPECT_EQ(*Ask(a.get(), Op("append", "a", "l").Set("data", Value::String("x"))), error("ELOOP"));  // not followed
  EXPECT_EQ(*Ask(a.get(), Op("chmod", "a", "l").Set("mode", Value::Int(0600))), error("ELOOP"));
  EXPECT_EQ(*Ask(a.get(), Op("chmod", "a", "f").Set("mode", Value::Int(0600))), ok);
  auto tree = Ask(a.get(), Op("list", "a").Set("modes", Value::Bool(true)));
  ASSERT_TRUE(tree.ok()) << tree.status();
  const std::vector<Value>& l = tree->Find("tree")->as_list();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0],
            Value::Map({{"kind", Value::String("dir")}, {"mode", Value::Int(0755)}, {"path", Value::String("e")}}));
  EXPECT_EQ(l[1].Find("path")->as_string(), "e/p");
  EXPECT_EQ(l[2], Value::Map({{"data", Value::String("xyz")},
                              {"kind", Value::String("file")},
                              {"mode", Value::Int(0600)},
                              {"path", Value::String("f")}}));
  EXPECT_EQ(
      l[3],
      Value::Map({{"kind", Value::String("link")}, {"path", Value::String("l")}, {"target", Value::String("e/p")}}));
  // A link's target and a rename's destination stay in the replica too; a
  // mode is 0 to 0777.
  for (const char* bad : {"/etc", "../x", "e/../../x"}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(Ask(a.get(), Op("symlink", "a", "m").Set("target", Value::String(bad))).status()))
        << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(Ask(a.get(), Op("rename", "a", "f").Set("to", Value::String(bad))).status()))
        << bad;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(Ask(a.get(), Op("chmod", "a", "f").Set("mode", Value::Int(01000))).status()));
  EXPECT_EQ(*Ask(a.get(), Op("rmdir", "a", "e")), error("ENOTEMPTY"));
  ASSERT_EQ(*Ask(a.get(), Op("delete", "a", "e/p")), ok);
  EXPECT_EQ(*Ask(a.get(), Op("rmdir", "a", "e")), ok);
}

// As root, the program runs as an unprivileged user who owns the replicas
// and what the tester made in them, so mode bits bind it; a tester that is
// not root cannot give its runs away.
TEST_F(FsAdapterTest, TheProgramRunsAsTheUserItIsGiven) {
  FsConfig c;
  c.root = root_;
  c.command = "id -u > {dir}/uid; echo x > {a}/d/new; echo y > {a}/locked/new";
  c.run_as = "nobody";
  auto made = MakeFsAdapter(c);
  if (::geteuid() != 0) {
    ASSERT_TRUE(absl::IsInvalidArgument(made.status())) << made.status();
    EXPECT_NE(made.status().message().find("needs the tester to run as root"), std::string::npos) << made.status();
    return;
  }
  ASSERT_TRUE(made.ok()) << made.status();
  Adapter* a = made->get();
  const Value ok = Value::Map({{"ok", Value::Bool(true)}});
  ASSERT_EQ(*Ask(a, Op("mkdir", "a", "d")), ok);
  ASSERT_EQ(*Ask(a, Op("mkdir", "a", "locked")), ok);
  ASSERT_EQ(*Ask(a, Op("chmod", "a", "locked").Set("mode", Value::Int(0500))), ok);
  auto r = Ask(a, Value::Map({{"op", Value::String("run")}}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(*r->Find("exit"), Value::Int(0)) << "a directory of mode 0500 refused the write";
  EXPECT_NE(r->Find("output")->as_string().find("Permission denied"), std::string::npos)
      << r->Find("output")->as_string();
  EXPECT_TRUE(std::filesystem::exists(root_ + "/a/d/new")) << "its own directory took the write";
  std::ifstream uid_file(root_ + "/uid");
  int uid = -1;
  uid_file >> uid;
  EXPECT_EQ(uid, 65534) << "Debian's nobody";
  EXPECT_TRUE(absl::IsInvalidArgument(
      MakeFsAdapter({.root = root_ + "/x", .command = "true", .run_as = "no-such-user"}).status()));
}

// A job directory the user cannot reach (under a private directory, such
// as a worker's 0700 work directory) is refused before any run, naming the
// directory in the way: every run would fail with EACCES, which is no
// finding against the program.
TEST_F(FsAdapterTest, AJobDirectoryTheUserCannotReachIsRefused) {
  ASSERT_EQ(::geteuid(), 0) << "running the program as another user needs the tests to run as root (README)";
  ASSERT_EQ(::chmod(root_.c_str(), 0711), 0);  // mkdtemp's 0700 would be in the way too
  const std::string private_dir = root_ + "/private";
  ASSERT_EQ(::mkdir(private_dir.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((private_dir + "/job").c_str(), 0700), 0);
  auto made = MakeFsAdapter({.root = private_dir + "/job", .command = "true", .run_as = "nobody"});
  ASSERT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition) << made.status();
  EXPECT_NE(made.status().message().find(private_dir + " is mode 0700"), std::string::npos) << made.status();
  ASSERT_EQ(::chmod(private_dir.c_str(), 0711), 0);
  EXPECT_TRUE(MakeFsAdapter({.root = private_dir + "/job", .command = "true", .run_as = "nobody"}).ok());
}

// A tester that is not root is bound by mode bits itself, so a chmod that
// would take the owner's rights away (its own later writes into the
// directory would fail where the spec expects them to succeed) is an error
// of the job, never done; modes that keep them are done. Run in a child
// that has become nobody.
TEST_F(FsAdapterTest, ATesterThatIsNotRootRefusesModesThatWouldBindItself) {
  ASSERT_EQ(::geteuid(), 0) << "becoming nobody needs the tests to run as root (README)";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(10);
    std::string tmpl = "/tmp/ds-fs-nobody-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) ::_exit(11);
    auto made = MakeFsAdapter({.root = tmpl, .command = "true"});
    if (!made.ok()) ::_exit(12);
    Adapter* a = made->get();
    auto ask = [&](const Value& q) -> absl::StatusOr<Value> {
      if (absl::Status st = a->Send(0, q); !st.ok()) return st;
      std::vector<AdapterEvent> events;
      if (absl::Status st = a->Poll(0, &events); !st.ok()) return st;
      return events.empty() ? absl::InternalError("no answer") : absl::StatusOr<Value>(events[0].msg);
    };
    const Value ok = Value::Map({{"ok", Value::Bool(true)}});
    auto chmod = [&](const char* path, int mode) { return ask(Op("chmod", "a", path).Set("mode", Value::Int(mode))); };
    int code = 0;
    if (auto r = ask(Op("mkdir", "a", "d")); !r.ok() || *r != ok) code = 13;
    if (auto r = chmod("d", 0500); code == 0 && (r.ok() || !absl::IsFailedPrecondition(r.status()) ||
                                                 r.status().message().find("not root") == std::string::npos))
      code = 14;
    if (auto r = chmod("d", 0700); code == 0 && (!r.ok() || *r != ok)) code = 15;
    if (auto r = ask(Op("write", "a", "d/f").Set("data", Value::String("x"))); code == 0 && (!r.ok() || *r != ok))
      code = 16;
    if (auto r = chmod("d/f", 0400); code == 0 && r.ok()) code = 17;
    if (auto r = chmod("d/f", 0600); code == 0 && (!r.ok() || *r != ok)) code = 18;
    std::filesystem::remove_all(tmpl);
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10-12: becoming nobody or setting up failed; 13-18: the step that failed";
}

// A command the shell cannot start is the target's setup error (the job's,
// never a finding); a program that exits 127 itself is answered as usual.
TEST_F(FsAdapterTest, ACommandTheShellCannotStartIsASetupError) {
  const Value run = Value::Map({{"op", Value::String("run")}});
  auto missing = Make("no-such-synchronizer {a} {b}");
  ASSERT_NE(missing, nullptr);
  auto r = Ask(missing.get(), run);
  ASSERT_TRUE(IsTargetSetupError(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("not found"), std::string::npos) << r.status();

  std::filesystem::remove_all(root_);
  std::filesystem::create_directory(root_);
  auto own = Make("echo gave up >&2; exit 127");
  ASSERT_NE(own, nullptr);
  auto answered = Ask(own.get(), run);
  ASSERT_TRUE(answered.ok()) << answered.status();
  EXPECT_EQ(*answered->Find("exit"), Value::Int(127));
}

TEST_F(FsAdapterTest, PathsStayInTheirReplica) {
  auto a = Make("true");
  ASSERT_NE(a, nullptr);
  for (const char* bad : {"/etc/x", "../x", "d/../../x", "d//x", ".", "a/./b"}) {
    auto r = Ask(a.get(), Op("write", "a", bad).Set("data", Value::String("x")));
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad << ": " << r.status();
  }
  // A symbolic link the program made does not lead the tester out.
  std::filesystem::create_directory_symlink("/tmp", root_ + "/a/out");
  auto through = Ask(a.get(), Op("write", "a", "out/x").Set("data", Value::String("x")));
  EXPECT_TRUE(absl::IsFailedPrecondition(through.status())) << through.status();
  auto listed = Ask(a.get(), Op("list", "a"));
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->Find("tree")->as_list().size(), 1u);
  EXPECT_EQ(listed->Find("tree")->as_list()[0].Find("kind")->as_string(), "link");
  EXPECT_TRUE(absl::IsInvalidArgument(Ask(a.get(), Op("list", "c")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Ask(a.get(), Op("chown", "a", "x")).status()));
}

TEST_F(FsAdapterTest, AListOverTheBoundIsAnErrorNamingIt) {
  auto a = Make("true");
  ASSERT_NE(a, nullptr);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Ask(a.get(), Op("mkdir", "a", "d" + std::to_string(i))).ok());
  auto r = Ask(a.get(), Op("list", "a"));
  ASSERT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("more than 5 entries"), std::string::npos) << r.status();
}

TEST_F(FsAdapterTest, ARunReportsItsExitStatusOrItsTimeout) {
  auto a = Make("echo hi; touch {a}/ran; exit 3");
  ASSERT_NE(a, nullptr);
  auto r = Ask(a.get(), Value::Map({{"op", Value::String("run")}}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->Find("exit"), Value::Int(3));
  EXPECT_EQ(r->Find("output")->as_string(), "hi\n");
  EXPECT_TRUE(std::filesystem::exists(root_ + "/a/ran"));

  std::filesystem::remove_all(root_);
  std::filesystem::create_directory(root_);
  auto slow = Make("sleep 30", 200);
  ASSERT_NE(slow, nullptr);
  auto t = Ask(slow.get(), Value::Map({{"op", Value::String("run")}}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->Find("timeout"), Value::Bool(true));
}

}  // namespace
}  // namespace dualswarm::workers
