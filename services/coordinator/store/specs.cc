// Spec versions: stored once per source (content-addressed by SHA-256),
// read by hash or as a name's newest version, listed newest first.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/lang/limits.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

// The version with `hash`, or NOT_FOUND.
absl::StatusOr<SpecRow> SpecByHash(Sql& w, const std::string& hash) {
  return ReadOne(w, SpecColumns(), absl::StrCat("no spec version ", hash), "FROM specs WHERE hash = $1", hash);
}

}  // namespace

absl::StatusOr<SpecRow> Store::PutSpec(const std::string& name, const std::string& file_name, const std::string& source,
                                       int choice_sites, bool* created, std::optional<std::vector<std::string>> gens,
                                       std::optional<bool> origin_role) {
  if (name.empty() || name.size() > kMaxNameBytes) return absl::InvalidArgumentError("bad spec name");
  if (source.size() > lang::kMaxSpecSourceBytes) return absl::InvalidArgumentError(lang::kSpecSourceTooLarge);
  RETURN_IF_ERROR(CheckText("spec name", name, true));
  RETURN_IF_ERROR(CheckText("file_name", file_name, true));
  if (gens.has_value()) RETURN_IF_ERROR(CheckList("gen name", *gens));
  std::string hash = Sha256Hex(source);
  bool made = false;
  auto row = Run<SpecRow>("storing a spec", [&](Sql& w) -> absl::StatusOr<SpecRow> {
    pqxx::result ins = w.exec_params(
        "INSERT INTO specs (hash, name, file_name, source, choice_sites, gens, origin_role)"
        " VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN $7::text[] END, CASE WHEN $8 THEN $9::boolean END)"
        " ON CONFLICT (hash) DO NOTHING RETURNING hash",
        hash, name, file_name, source, choice_sites, gens.has_value(),
        TextArray(gens.value_or(std::vector<std::string>{})), origin_role.has_value(), origin_role.value_or(false));
    made = !ins.empty();
    return SpecByHash(w, hash);
  });
  if (row.ok() && created != nullptr) *created = made;
  return row;
}

absl::StatusOr<SpecRow> Store::GetSpec(const std::string& hash) {
  RETURN_IF_ERROR(CheckText("hash", hash, true));
  return Run<SpecRow>("reading a spec", [&](Sql& w) { return SpecByHash(w, hash); });
}

absl::StatusOr<SpecRow> Store::GetLatestSpec(const std::string& name) {
  RETURN_IF_ERROR(CheckText("name", name, true));
  return ReadRow("reading a spec", SpecColumns(), absl::StrCat("no spec named \"", name, "\""),
                 "FROM specs WHERE name = $1 ORDER BY seq DESC LIMIT 1", name);
}

absl::StatusOr<Listing<SpecRow>> Store::ListSpecs(const std::string& name, const Page& page) {
  RETURN_IF_ERROR(CheckText("name", name, true));
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<SpecRow>>("listing specs", [&](Sql& w) -> absl::StatusOr<Listing<SpecRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", SpecColumns().list(),
                     ", seq FROM specs WHERE ($1 = '' OR name = $1) AND ($2::bigint = 0 OR seq < $2::bigint)"
                     " ORDER BY seq DESC LIMIT $3"),
        name, paging.after, paging.size + 1);
    auto read = [](const pqxx::row& row) {
      SpecRow s = SpecColumns().Read(row);
      s.source.clear();  // listings leave sources out
      return s;
    };
    return ReadPage<SpecRow>(r, paging.size, read,
                             [](const SpecRow&, const pqxx::row& last) { return std::to_string(I64(last["seq"])); });
  });
}

}  // namespace dualswarm::coord
