#include "workers/adapters/fs_adapter.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "util/status_macros.h"
#include "workers/sut/shell_spawn.h"

namespace dualswarm::workers {
namespace {

namespace fs = std::filesystem;
using ir::Value;

// The base of `touch` times: mtime N is this many seconds plus N.
constexpr int64_t kTouchEpoch = 1'600'000'000;

bool ValidReplicaName(const std::string& r) {
  if (r.empty() || r.size() > 16) return false;
  return std::all_of(r.begin(), r.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); });
}

// errno as its symbolic name ("ENOENT"), the answer of a failed operation.
std::string ErrnoName(int e) {
  const char* name = ::strerrorname_np(e);  // glibc 2.32
  return name != nullptr ? name : absl::StrCat("E", e);
}

Value Ok() { return Value::Map({{"ok", Value::Bool(true)}}); }
Value Failed(int e) { return Value::Map({{"error", Value::String(ErrnoName(e))}}); }

const std::string* StringField(const Value& q, const char* name) {
  const Value* v = q.is_map() ? q.Find(name) : nullptr;
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

// Int field `name` of an `op` request, in [0, max] (InvalidArgument, naming
// the bound, otherwise).
absl::StatusOr<int64_t> IntField(const Value& q, const char* op, const char* name, int64_t max) {
  const Value* v = q.Find(name);
  if (v == nullptr || !v->is_int() || v->as_int() < 0 || v->as_int() > max)
    return absl::InvalidArgumentError(
        absl::StrCat("fs adapter: \"", op, "\" needs an int \"", name, "\" in [0, ", max, "]"));
  return v->as_int();
}

constexpr const char* kOps = "write, append, mkdir, rmdir, delete, rename, symlink, chmod, touch, list, run";

// The user a program runs as: uid and gid, -1 for the tester's own.
struct RunAs {
  int uid = -1;
  int gid = -1;
};

class FsAdapter : public Adapter {
 public:
  FsAdapter(FsConfig c, RunAs user) : c_(std::move(c)), user_(user) {}

  absl::Status Send(int conn, const Value& request) override {
    ASSIGN_OR_RETURN(Value answer, Carry(request));
    AdapterEvent e{AdapterEvent::Kind::kReceived, conn, std::move(answer), "", NowNs()};
    done_.push_back(std::move(e));
    return absl::OkStatus();
  }

  absl::Status Poll(int timeout_ms, std::vector<AdapterEvent>* events) override {
    if (done_.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));  // nothing is in flight
      return absl::OkStatus();
    }
    for (auto& e : done_) events->push_back(std::move(e));
    done_.clear();
    return absl::OkStatus();
  }

  void Close(int) override {}
  void CloseAll() override { done_.clear(); }
  int MaxInFlightPerConnection() const override { return 1; }

 private:
  static int64_t NowNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  absl::StatusOr<Value> Carry(const Value& q) {
    const std::string* op = StringField(q, "op");
    if (op == nullptr) return absl::InvalidArgumentError("fs adapter: a request needs a string field \"op\"");
    if (*op == "run") return Run();
    const std::string* replica = StringField(q, "replica");
    if (replica == nullptr || std::find(c_.replicas.begin(), c_.replicas.end(), *replica) == c_.replicas.end())
      return absl::InvalidArgumentError(
          absl::StrCat("fs adapter: \"", *op, "\" needs \"replica\", one of ", absl::StrJoin(c_.replicas, ", ")));
    const std::string base = c_.root + "/" + *replica;
    if (*op == "list") {
      ASSIGN_OR_RETURN(std::vector<std::string> ignore, IgnorePatterns(q));
      const Value* modes = q.Find("modes");
      return List(base, *replica, ignore, modes != nullptr && modes->is_bool() && modes->as_bool());
    }
    const std::string* path = StringField(q, "path");
    if (path == nullptr) return absl::InvalidArgumentError(absl::StrCat("fs adapter: \"", *op, "\" needs \"path\""));
    RETURN_IF_ERROR(CheckPath(*path));
    ASSIGN_OR_RETURN(std::string full, Confined(base, *path));
    // What the tester makes belongs to the user the program runs as.
    if (*op == "write") return Owned(Write(full, q), full);
    if (*op == "append") return Append(full, q);
    if (*op == "mkdir") return Owned(MakeDir(full), full);
    if (*op == "rmdir") return ::rmdir(full.c_str()) == 0 ? Ok() : Failed(errno);
    if (*op == "delete") return Delete(full);
    if (*op == "touch") return Touch(full, q);
    if (*op == "chmod") return Chmod(full, q);
    if (*op == "symlink") return Owned(Symlink(full, q), full);
    if (*op == "rename") return Rename(base, full, q);
    return absl::InvalidArgumentError(absl::StrCat("fs adapter: unknown op \"", *op, "\" (known: ", kOps, ")"));
  }

  // rename(2) of `full` to the request's "to", in the same replica.
  absl::StatusOr<Value> Rename(const std::string& base, const std::string& full, const Value& q) const {
    const std::string* to = StringField(q, "to");
    if (to == nullptr) return absl::InvalidArgumentError("fs adapter: \"rename\" needs a string \"to\"");
    RETURN_IF_ERROR(CheckPath(*to));
    ASSIGN_OR_RETURN(std::string full_to, Confined(base, *to));
    return ::rename(full.c_str(), full_to.c_str()) == 0 ? Ok() : Failed(errno);
  }

  // `answer`, after giving `full` to the run-as user when it says ok.
  absl::StatusOr<Value> Owned(absl::StatusOr<Value> answer, const std::string& full) const {
    if (!answer.ok() || user_.uid < 0 || answer->Find("ok") == nullptr) return answer;
    if (::lchown(full.c_str(), static_cast<uid_t>(user_.uid), static_cast<gid_t>(user_.gid)) != 0)
      return absl::InternalError(absl::StrCat("fs adapter: chown ", full, ": ", std::strerror(errno)));
    return answer;
  }

  absl::Status CheckPath(const std::string& p) const {
    if (p.empty() || p.size() > c_.limits.max_path_bytes)
      return absl::InvalidArgumentError(
          absl::StrCat("fs adapter: a path must have 1 to ", c_.limits.max_path_bytes, " bytes (got ", p.size(), ")"));
    std::vector<std::string> parts = absl::StrSplit(p, '/');
    if (parts.size() > c_.limits.max_depth)
      return absl::InvalidArgumentError(
          absl::StrCat("fs adapter: path \"", p, "\" is deeper than ", c_.limits.max_depth, " components"));
    for (const auto& part : parts)
      if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos)
        return absl::InvalidArgumentError(
            absl::StrCat("fs adapter: path \"", p, "\" must be relative, without empty, \".\" or \"..\" components"));
    return absl::OkStatus();
  }

  // base/path, refused when a directory on the way is a symbolic link (the
  // operation could leave the replica).
  absl::StatusOr<std::string> Confined(const std::string& base, const std::string& path) const {
    std::string at = base;
    std::vector<std::string> parts = absl::StrSplit(path, '/');
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      at += "/" + parts[k];
      struct stat st {};
      if (::lstat(at.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        return absl::FailedPreconditionError(
            absl::StrCat("fs adapter: \"", path, "\" goes through a symbolic link; the adapter does not follow them"));
    }
    return base + "/" + path;
  }

  // In place (the inode stays), or with "via": "rename" through a new file
  // renamed over it (a new inode).
  absl::StatusOr<Value> Write(const std::string& full, const Value& q) {
    ASSIGN_OR_RETURN(const std::string* data, DataOf(q, "write"));
    const std::string* via = StringField(q, "via");
    const bool rename = via != nullptr && *via == "rename";
    struct stat st {};
    const bool existed = ::lstat(full.c_str(), &st) == 0;
    if (existed && S_ISDIR(st.st_mode)) return Failed(EISDIR);
    const std::string target = rename ? full + ".ds-new" : full;
    int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return Failed(errno);
    // A new file is 0644 whatever the tester's umask (specs model modes).
    if ((rename || !existed) && ::fchmod(fd, 0644) != 0) {
      int e = errno;
      ::close(fd);
      return Failed(e);
    }
    Value written = WriteAll(fd, *data);
    if (written.Find("ok") == nullptr) return written;
    if (rename && ::rename(target.c_str(), full.c_str()) != 0) {
      int e = errno;
      ::unlink(target.c_str());
      return Failed(e);
    }
    return Ok();
  }

  // The request's "data", at most max_data_bytes.
  absl::StatusOr<const std::string*> DataOf(const Value& q, const char* op) const {
    const std::string* data = StringField(q, "data");
    if (data == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("fs adapter: \"", op, "\" needs a string \"data\""));
    if (data->size() > c_.limits.max_data_bytes)
      return absl::InvalidArgumentError(
          absl::StrCat("fs adapter: data of ", data->size(), " bytes is over the bound of ", c_.limits.max_data_bytes));
    return data;
  }

  // Writes all of `data` to fd and closes it: ok, or the errno.
  static Value WriteAll(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(fd, data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int e = errno;
        ::close(fd);
        return Failed(e);
      }
      off += static_cast<size_t>(n);
    }
    ::close(fd);
    return Ok();
  }

  // A new directory, 0755 whatever the tester's umask.
  static Value MakeDir(const std::string& full) {
    if (::mkdir(full.c_str(), 0755) != 0) return Failed(errno);
    return ::chmod(full.c_str(), 0755) == 0 ? Ok() : Failed(errno);
  }

  // Appends to an existing file (never creates one, never follows a link).
  absl::StatusOr<Value> Append(const std::string& full, const Value& q) {
    ASSIGN_OR_RETURN(const std::string* data, DataOf(q, "append"));
    int fd = ::open(full.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Failed(errno);
    return WriteAll(fd, *data);
  }

  // The mode bits (0 to 0777) of a file or directory; a symbolic link's
  // own mode cannot be set on Linux and its target's is not the replica's
  // business: ELOOP.
  static absl::StatusOr<Value> Chmod(const std::string& full, const Value& q) {
    ASSIGN_OR_RETURN(int64_t mode, IntField(q, "chmod", "mode", 0777));
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) return Failed(errno);
    if (S_ISLNK(st.st_mode)) return Failed(ELOOP);
    // A tester that is not root is bound by mode bits itself: its own later
    // writes, lists and deletes there would fail where a spec (which models
    // the tester as able to do them) expects them to succeed — a finding
    // against a program that did nothing wrong. Such a mode is an error of
    // the job instead.
    const mode_t needed = S_ISDIR(st.st_mode) ? S_IRWXU : S_IRUSR | S_IWUSR;
    if (::geteuid() != 0 && (static_cast<mode_t>(mode) & needed) != needed)
      return absl::FailedPreconditionError(absl::StrCat(
          "fs adapter: chmod 0", absl::StrFormat("%o", mode), " of ", full,
          " would take its owner's rights away from the tester itself (it runs as uid ", ::geteuid(),
          ", not root): run the tester as root to test such modes (--run-as USER then binds the program)"));
    return ::chmod(full.c_str(), static_cast<mode_t>(mode)) == 0 ? Ok() : Failed(errno);
  }

  // A symbolic link whose target stays inside the replica as written:
  // relative, without ".." or empty components (a synchronizer that follows
  // links must not be led out of the job's directory).
  absl::StatusOr<Value> Symlink(const std::string& full, const Value& q) {
    const std::string* target = StringField(q, "target");
    if (target == nullptr) return absl::InvalidArgumentError("fs adapter: \"symlink\" needs a string \"target\"");
    if (absl::Status s = CheckPath(*target); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat("fs adapter: a symlink's target: ", s.message()));
    return ::symlink(target->c_str(), full.c_str()) == 0 ? Ok() : Failed(errno);
  }

  static Value Delete(const std::string& full) {
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) return Failed(errno);
    std::error_code ec;
    fs::remove_all(full, ec);  // never follows symbolic links
    return ec ? Failed(ec.value()) : Ok();
  }

  static absl::StatusOr<Value> Touch(const std::string& full, const Value& q) {
    ASSIGN_OR_RETURN(int64_t mtime, IntField(q, "touch", "mtime", 1'000'000'000));
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec = static_cast<time_t>(kTouchEpoch + mtime);
    times[0].tv_nsec = times[1].tv_nsec = 0;
    return ::utimensat(AT_FDCWD, full.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0 ? Ok() : Failed(errno);
  }

  // A list's "ignore": at most 16 shell patterns (fnmatch) of at most 64
  // bytes each.
  static absl::StatusOr<std::vector<std::string>> IgnorePatterns(const Value& q) {
    std::vector<std::string> out;
    const Value* v = q.Find("ignore");
    if (v == nullptr) return out;
    constexpr size_t kMaxPatterns = 16, kMaxPatternBytes = 64;
    if (!v->is_list() || v->as_list().size() > kMaxPatterns)
      return absl::InvalidArgumentError(
          absl::StrCat("fs adapter: \"ignore\" must be a list of at most ", kMaxPatterns, " patterns"));
    for (const Value& p : v->as_list()) {
      if (!p.is_string() || p.as_string().empty() || p.as_string().size() > kMaxPatternBytes)
        return absl::InvalidArgumentError(
            absl::StrCat("fs adapter: an \"ignore\" pattern is a string of 1 to ", kMaxPatternBytes, " bytes"));
      out.push_back(p.as_string());
    }
    return out;
  }

  static bool Ignored(const fs::path& p, const std::vector<std::string>& ignore) {
    const std::string name = p.filename().string();
    for (const auto& pattern : ignore)
      if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
    return false;
  }

  // {"tree": [{"path", "kind", "data"?, "target"?, "mode"?}...]} sorted by
  // path (bytewise): "file" with its data, "dir", "link" with its target,
  // or "other"; with `modes`, each but a link with its mode bits. Entries whose name matches an `ignore` pattern are
  // left out, with everything under them.
  absl::StatusOr<Value> List(const std::string& base, const std::string& replica,
                             const std::vector<std::string>& ignore, bool modes) {
    std::map<std::string, Value> entries;
    size_t data_bytes = 0;
    std::error_code ec;
    fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
    if (ec) return Failed(ec.value());
    for (; it != end; it.increment(ec)) {
      if (ec) return absl::InternalError(absl::StrCat("fs adapter: listing replica ", replica, ": ", ec.message()));
      if (entries.size() >= c_.limits.max_entries)
        return absl::ResourceExhaustedError(absl::StrCat("fs adapter: replica ", replica, " holds more than ",
                                                         c_.limits.max_entries, " entries (the list bound)"));
      if (Ignored(it->path(), ignore)) {
        it.disable_recursion_pending();
        continue;
      }
      std::string rel = it->path().lexically_relative(base).generic_string();
      ir::MapEntries e = {{"path", Value::String(rel)}};
      fs::file_status st = it->symlink_status(ec);
      if (fs::is_symlink(st)) {
        e.push_back({"kind", Value::String("link")});
        e.push_back({"target", Value::String(fs::read_symlink(it->path(), ec).string())});
      } else if (fs::is_directory(st)) {
        e.push_back({"kind", Value::String("dir")});
      } else if (fs::is_regular_file(st)) {
        ASSIGN_OR_RETURN(std::string data, ReadBounded(it->path().string(), &data_bytes, replica));
        e.push_back({"kind", Value::String("file")});
        e.push_back({"data", Value::String(std::move(data))});
      } else {
        e.push_back({"kind", Value::String("other")});
      }
      if (modes && !fs::is_symlink(st)) e.push_back({"mode", Value::Int(static_cast<int>(st.permissions()) & 07777)});
      entries.emplace(std::move(rel), Value::Map(std::move(e)));
    }
    std::vector<Value> tree;
    for (auto& [p, v] : entries) tree.push_back(std::move(v));
    return Value::Map({{"tree", Value::List(std::move(tree))}});
  }

  absl::StatusOr<std::string> ReadBounded(const std::string& file, size_t* total, const std::string& replica) const {
    int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return absl::InternalError(absl::StrCat("fs adapter: reading ", file, ": ", std::strerror(errno)));
    std::string out;
    char buf[8192];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (*total + out.size() > c_.limits.max_list_bytes) {
        ::close(fd);
        return absl::ResourceExhaustedError(absl::StrCat("fs adapter: replica ", replica, " holds more than ",
                                                         c_.limits.max_list_bytes, " bytes of files (the list bound)"));
      }
    }
    ::close(fd);
    *total += out.size();
    return out;
  }

  // Runs the command to its end (or kills its process group at the
  // timeout): {"exit": N}, or {"signal": S}, or {"timeout": true}; with
  // "output", the end of what it printed.
  absl::StatusOr<Value> Run() {
    const std::string log = c_.root + "/run.log";
    ASSIGN_OR_RETURN(ShellRun run,
                     RunShell({FsCommandLine(c_), log, false, c_.root, user_.uid, user_.gid}, c_.run_timeout_ms));
    const int status = run.status;
    const bool timed_out = run.timed_out;
    std::string output = OutputTail(log);
    // The shell's own failure to start the command (exit 127: not found,
    // 126: not executable, its message first) is a mistake in the target's
    // template, not something the program did: a job error, never a finding.
    if (!timed_out && WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127) &&
        output.rfind("sh: ", 0) == 0)
      return TargetSetupError(absl::StrCat("fs adapter: /bin/sh could not start the target's command `",
                                           FsCommandLine(c_), "` (exit ", WEXITSTATUS(status), "): ", output));
    ir::MapEntries out;
    if (timed_out) {
      out.push_back({"timeout", Value::Bool(true)});
    } else if (WIFEXITED(status)) {
      out.push_back({"exit", Value::Int(WEXITSTATUS(status))});
    } else {
      out.push_back({"signal", Value::Int(WTERMSIG(status))});
    }
    out.push_back({"output", Value::String(std::move(output))});
    return Value::Map(std::move(out));
  }

  std::string OutputTail(const std::string& log) const {
    std::error_code ec;
    auto size = fs::file_size(log, ec);
    if (ec) return "";
    int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    size_t keep = std::min<size_t>(size, c_.limits.max_output_bytes);
    std::string out(keep, '\0');
    ssize_t n = ::pread(fd, out.data(), keep, static_cast<off_t>(size - keep));
    ::close(fd);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
  }

  FsConfig c_;
  RunAs user_;
  std::deque<AdapterEvent> done_;  // answered, not yet polled
};

// The uid and gid of user `name` ("" : the tester's own, -1), refused when
// the tester is not root and `name` is not itself.
absl::StatusOr<RunAs> UserToRunAs(const std::string& name) {
  if (name.empty()) return RunAs{};
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("fs adapter: no user \"", name, "\" to run the program as"));
  if (::geteuid() != 0 && pw.pw_uid != ::geteuid())
    return absl::InvalidArgumentError(
        absl::StrCat("fs adapter: running the program as \"", name, "\" needs the tester to run as root"));
  return RunAs{static_cast<int>(pw.pw_uid), static_cast<int>(pw.pw_gid)};
}

// Whether `user` may reach `root`: every directory above it grants the
// user search permission (as owner, by its primary group — the program runs
// with no other — or as anyone). A job directory under a private one (a
// worker's 0700 work directory) would fail every run with EACCES: a
// mistake in the setup, never a finding against the program.
absl::Status CheckUserReaches(const std::string& root, const RunAs& user) {
  if (user.uid == 0) return absl::OkStatus();  // root searches anything
  // The real directories above it: from the top, through links and "..".
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(root, ec), ec);
  if (ec) return absl::InternalError(absl::StrCat("fs adapter: resolving ", root, ": ", ec.message()));
  for (fs::path p = real.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
      return absl::InternalError(absl::StrCat("fs adapter: stat ", p.string(), ": ", std::strerror(errno)));
    const mode_t bit = st.st_uid == static_cast<uid_t>(user.uid)   ? S_IXUSR
                       : st.st_gid == static_cast<gid_t>(user.gid) ? S_IXGRP
                                                                   : S_IXOTH;
    if ((st.st_mode & bit) == 0)
      return absl::FailedPreconditionError(absl::StrCat("fs adapter: the user the program runs as (uid ", user.uid,
                                                        ") cannot reach the job's directory ", root, ": ", p.string(),
                                                        " is mode 0", absl::StrFormat("%o", st.st_mode & 07777),
                                                        " (keep jobs under a directory it may search, such as /tmp)"));
    if (p == p.root_path()) break;
  }
  return absl::OkStatus();
}

}  // namespace

std::string FsCommandLine(const FsConfig& config) {
  std::vector<std::pair<std::string, std::string>> names = {{"{dir}", config.root}};
  for (const auto& r : config.replicas) names.emplace_back(absl::StrCat("{", r, "}"), config.root + "/" + r);
  return absl::StrReplaceAll(config.command, names);
}

absl::StatusOr<std::unique_ptr<Adapter>> MakeFsAdapter(const FsConfig& config) {
  if (config.command.empty()) return absl::InvalidArgumentError("fs adapter: no command to run");
  if (config.run_timeout_ms <= 0) return absl::InvalidArgumentError("fs adapter: the run timeout must be positive");
  for (const auto& r : config.replicas)
    if (!ValidReplicaName(r))
      return absl::InvalidArgumentError(absl::StrCat("fs adapter: replica name \"", r, "\" is not 1-16 of [a-z0-9]"));
  std::error_code ec;
  if (!fs::is_directory(config.root, ec) || !fs::is_empty(config.root, ec))
    return absl::InvalidArgumentError(absl::StrCat("fs adapter: root ", config.root, " is not an empty directory"));
  ASSIGN_OR_RETURN(RunAs user, UserToRunAs(config.run_as));
  if (user.uid >= 0) RETURN_IF_ERROR(CheckUserReaches(config.root, user));
  std::vector<std::string> owned = {config.root};
  for (const auto& r : config.replicas) {
    owned.push_back(config.root + "/" + r);
    if (::mkdir(owned.back().c_str(), 0755) != 0)
      return absl::InternalError(absl::StrCat("fs adapter: mkdir ", owned.back(), ": ", std::strerror(errno)));
  }
  if (user.uid >= 0)
    for (const auto& d : owned)
      if (::chown(d.c_str(), static_cast<uid_t>(user.uid), static_cast<gid_t>(user.gid)) != 0)
        return absl::InternalError(absl::StrCat("fs adapter: chown ", d, ": ", std::strerror(errno)));
  return std::unique_ptr<Adapter>(new FsAdapter(config, user));
}

}  // namespace dualswarm::workers
