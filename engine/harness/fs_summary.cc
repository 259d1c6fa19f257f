#include "engine/harness/fs_summary.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/ir/json.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

constexpr size_t kMaxData = 16;     // bytes of a file's data or a run's output shown
constexpr size_t kMaxSummary = 96;  // of the whole line

std::string Str(const Value& m, const char* field) {
  const Value* v = m.Find(field);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

// A string as JSON, its first kMaxData bytes.
std::string Quoted(const std::string& s) {
  std::string out;
  ir::AppendJsonString(s.size() > kMaxData ? s.substr(0, kMaxData - 3) + "..." : s, &out);
  return out;
}

std::string Request(const Value& m) {
  const std::string op = Str(m, "op");
  if (op == "run") return "run";
  if (op == "list") return absl::StrCat("list ", Str(m, "replica"));
  std::string s = absl::StrCat(op, " ", Str(m, "replica"), ":", Str(m, "path"));
  if (const Value* d = m.Find("data"); d != nullptr && d->is_string()) absl::StrAppend(&s, " ", Quoted(d->as_string()));
  if (Str(m, "via") == "rename") absl::StrAppend(&s, " via rename");
  if (op == "rename") absl::StrAppend(&s, " -> ", Str(m, "to"));
  if (op == "symlink") absl::StrAppend(&s, " -> ", Str(m, "target"));
  if (const Value* mode = m.Find("mode"); mode != nullptr && mode->is_int())
    absl::StrAppend(&s, absl::StrFormat(" %04o", mode->as_int()));
  if (const Value* t = m.Find("mtime"); t != nullptr && t->is_int()) absl::StrAppend(&s, " mtime ", t->as_int());
  return s;
}

// "d/ d/p="1" l->x": directories with a slash, files with their data,
// links with their target.
std::string Tree(const Value& tree) {
  if (tree.as_list().empty()) return "tree: (empty)";
  std::string s = "tree:";
  for (const Value& e : tree.as_list()) {
    if (!e.is_map()) continue;
    const std::string kind = Str(e, "kind");
    absl::StrAppend(&s, " ", Str(e, "path"));
    if (kind == "dir") absl::StrAppend(&s, "/");
    if (kind == "file") absl::StrAppend(&s, "=", Quoted(Str(e, "data")));
    if (kind == "link") absl::StrAppend(&s, "->", Str(e, "target"));
    if (kind == "other") absl::StrAppend(&s, "(other)");
    if (const Value* mode = e.Find("mode"); mode != nullptr && mode->is_int())
      absl::StrAppend(&s, absl::StrFormat("(%04o)", mode->as_int()));
  }
  return s;
}

std::string Answer(const Value& m) {
  if (const Value* t = m.Find("tree"); t != nullptr && t->is_list()) return Tree(*t);
  std::string s;
  if (const Value* e = m.Find("exit"); e != nullptr && e->is_int()) s = absl::StrCat("exit ", e->as_int());
  if (const Value* g = m.Find("signal"); g != nullptr && g->is_int()) s = absl::StrCat("signal ", g->as_int());
  if (const Value* t = m.Find("timeout"); t != nullptr && t->is_bool() && t->as_bool()) s = "timeout";
  if (!s.empty()) {
    if (std::string out = Str(m, "output"); !out.empty()) absl::StrAppend(&s, " ", Quoted(out));
    return s;
  }
  if (const Value* e = m.Find("error"); e != nullptr && e->is_string()) return absl::StrCat("error ", e->as_string());
  if (const Value* ok = m.Find("ok"); ok != nullptr && ok->is_bool() && ok->as_bool()) return "ok";
  return "";
}

}  // namespace

std::string SummarizeFsMessage(const Value& m) {
  std::string s;
  if (m.is_map()) s = m.Find("op") != nullptr ? Request(m) : Answer(m);
  if (s.empty()) s = ir::ToJson(m);
  return s.size() > kMaxSummary ? s.substr(0, kMaxSummary - 3) + "..." : s;
}

}  // namespace dualswarm::harness
