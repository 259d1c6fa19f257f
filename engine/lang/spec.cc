#include "engine/lang/spec.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/lang/checks.h"
#include "engine/lang/interp.h"
#include "engine/lang/limits.h"
#include "engine/lang/parser.h"

namespace dualswarm::lang {
namespace {

// Does v conform to the declared type t? On mismatch fills *why. Each
// node visited costs one of *steps_left (shared by all initial values, so
// many typed copies of one large value cannot add up to hours).
bool Conforms(const ir::Value& v, const TypeExpr& t, std::string* why, uint64_t* steps_left) {
  using K = ir::Value::Kind;
  auto fail = [&](absl::string_view want) {
    *why = absl::StrCat("expected ", want, ", got ", ir::Value::KindName(v.kind()));
    return false;
  };
  if (t.name == "any") return true;
  if (*steps_left == 0) {
    *why = absl::StrCat("checking initial values against their types took more than ", kMaxEvalSteps,
                        " steps (limit: evaluation steps)");
    return false;
  }
  --*steps_left;
  if (v.is_sym()) return true;  // never the case for initial values
  if (t.name == "int") return v.kind() == K::kInt || fail("int");
  if (t.name == "string") return v.kind() == K::kString || fail("string");
  if (t.name == "bool") return v.kind() == K::kBool || fail("bool");
  if (t.name == "null") return v.kind() == K::kNull || fail("null");
  if (t.name == "list") {
    if (!v.is_list()) return fail("list");
    for (const auto& x : v.as_list())
      if (!Conforms(x, t.params[0], why, steps_left)) return false;
    return true;
  }
  if (t.name == "option") {
    if (!v.is_option()) return fail("option");
    return !v.has_value() || Conforms(v.inner(), t.params[0], why, steps_left);
  }
  if (t.name == "map") {
    if (!v.is_map()) return fail("map");
    for (const auto& [k, x] : v.as_map())
      if (!Conforms(x, t.params[1], why, steps_left)) return false;
    return true;
  }
  if (t.name == "record") {
    if (!v.is_map()) return fail("record");
    for (size_t i = 0; i < t.fields.size(); ++i) {
      const ir::Value* f = v.Find(t.fields[i]);
      if (f == nullptr) {
        *why = absl::StrCat("missing field '", t.fields[i], "'");
        return false;
      }
      if (!Conforms(*f, t.params[i], why, steps_left)) return false;
    }
    return true;
  }
  return true;
}

}  // namespace

std::string StableHashHex(absl::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis (14695981039346656037)
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrCat(absl::Hex(h, absl::kZeroPad16));
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string why = err ? std::strerror(err) : "cannot open";
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": ", why));
    return absl::PermissionDeniedError(absl::StrCat(path, ": ", why));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::shared_ptr<const Spec>> LoadSpec(absl::string_view file, absl::string_view source) {
  ParseResult pr = Parse(file, source);
  if (!pr.errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(pr.errors, "\n"));
  auto spec = std::make_shared<Spec>();
  spec->ast = std::move(pr.ast);
  std::vector<std::string> errors = CheckAndResolve(&spec->ast);
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  spec->branches = NumberBranches(&spec->ast);
  spec->name = spec->ast.name;
  spec->file = std::string(file);
  spec->source = std::string(source);
  spec->content_hash = StableHashHex(source);
  if (!spec->ast.uses.empty()) spec->schema = spec->ast.uses[0].first;
  for (const auto& v : spec->ast.vars) spec->global_names.push_back(v.name);
  auto globals = Interpreter::EvalInitialGlobals(*spec);
  if (!globals.ok()) return globals.status();
  uint64_t conform_steps = kMaxEvalSteps;
  for (size_t i = 0; i < spec->ast.vars.size(); ++i) {
    const VarDecl& v = spec->ast.vars[i];
    std::string why;
    if (v.has_type && !Conforms((*globals)[i], v.type, &why, &conform_steps))
      errors.push_back(
          FormatDiag(file, v.loc, absl::StrCat("initial value of '", v.name, "' does not match its type: ", why)));
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  spec->initial_globals = std::move(*globals);
  return std::shared_ptr<const Spec>(std::move(spec));
}

absl::StatusOr<std::shared_ptr<const Spec>> LoadSpecFile(const std::string& path) {
  auto src = ReadFileToString(path);
  if (!src.ok()) return src.status();
  return LoadSpec(path, *src);
}

}  // namespace dualswarm::lang
