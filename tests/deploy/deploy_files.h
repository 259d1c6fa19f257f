// Helpers for the deployment tests (tests/deploy): the shipped files under
// deploy/ (Prometheus config, Grafana dashboards, systemd units, Kubernetes
// manifests), the flags the real binaries define (from --helpfull), metric
// names in PromQL expressions and in Prometheus text exposition. Header-only.
#ifndef DUALSWARM_TESTS_DEPLOY_DEPLOY_FILES_H_
#define DUALSWARM_TESTS_DEPLOY_DEPLOY_FILES_H_

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/ir/json.h"
#include "engine/ir/value.h"
#include "tests/common/processes.h"

namespace dualswarm::testing {

inline std::string DeployPath(const std::string& rel) { return std::string(DUALSWARM_SOURCE_DIR) + "/deploy/" + rel; }

// Files directly in deploy/DIR whose names end in `ext`, sorted.
inline std::vector<std::string> DeployFiles(const std::string& dir, const std::string& ext) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(DeployPath(dir), ec)) {
    std::string p = e.path().string();
    if (e.is_regular_file() && p.size() >= ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The flag names (abseil spelling, with underscores) a binary lists in
// `BINARY --helpfull`: lines "    --name (help...".
inline std::set<std::string> BinaryFlags(const std::string& binary) {
  CommandResult r = RunCommand({binary, "--helpfull"});
  std::set<std::string> flags;
  for (absl::string_view line : absl::StrSplit(r.out + "\n" + r.err, '\n')) {
    absl::string_view t = absl::StripLeadingAsciiWhitespace(line);
    if (t.size() == line.size() || t.substr(0, 2) != "--") continue;
    t.remove_prefix(2);
    size_t end = 0;
    while (end < t.size() && (std::isalnum(static_cast<unsigned char>(t[end])) || t[end] == '_')) ++end;
    if (end > 0 && end < t.size() && t[end] == ' ') flags.insert(std::string(t.substr(0, end)));
  }
  return flags;
}

// Every "--flag" token in `text` (a command line, or a whole file with
// comments), as abseil would see its name: up to '=', hyphens as
// underscores. Tokens must start a word (not "a--b").
inline std::vector<std::string> FlagsIn(absl::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] != '-' || text[i + 1] != '-') continue;
    if (i > 0 && !(std::isspace(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '"' || text[i - 1] == '\'' ||
                   text[i - 1] == '`' || text[i - 1] == '[' || text[i - 1] == '('))
      continue;
    size_t j = i + 2;
    if (j >= text.size() || !std::isalpha(static_cast<unsigned char>(text[j]))) continue;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-' || text[j] == '_'))
      ++j;
    std::string name(text.substr(i + 2, j - i - 2));
    std::replace(name.begin(), name.end(), '-', '_');
    out.push_back(name);
    i = j;
  }
  return out;
}

// Whether abseil accepts --name for a binary with `flags` (also --noNAME for
// booleans).
inline bool FlagKnown(const std::set<std::string>& flags, const std::string& name) {
  if (flags.count(name)) return true;
  return name.size() > 2 && name.compare(0, 2, "no") == 0 && flags.count(name.substr(2)) > 0;
}

// Names starting with dualswarm_ in a PromQL expression (metric names; no
// label name uses that prefix). Word boundaries on both sides.
inline std::set<std::string> MetricNamesInPromQL(absl::string_view expr) {
  std::set<std::string> out;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  const absl::string_view prefix = "dualswarm_";
  for (size_t i = expr.find(prefix); i != absl::string_view::npos; i = expr.find(prefix, i + 1)) {
    if (i > 0 && ident(expr[i - 1])) continue;
    size_t j = i;
    while (j < expr.size() && ident(expr[j])) ++j;
    out.insert(std::string(expr.substr(i, j - i)));
    i = j - 1;
  }
  return out;
}

// Series names in Prometheus text exposition: every sample line's name
// (histograms appear as NAME_bucket, NAME_sum, NAME_count).
inline std::set<std::string> SampleNames(absl::string_view text) {
  std::set<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    size_t end = line.find_first_of("{ ");
    if (end != absl::string_view::npos && end > 0) out.insert(std::string(line.substr(0, end)));
  }
  return out;
}

// One PromQL query of a dashboard, with where it is.
struct DashboardQuery {
  std::string dashboard;  // file name
  std::string panel;      // panel title
  std::string expr;
};

inline const ir::Value* Field(const ir::Value& map, absl::string_view key) {
  return map.is_map() ? map.Find(key) : nullptr;
}

inline std::string StringField(const ir::Value& map, absl::string_view key) {
  const ir::Value* v = Field(map, key);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

// The panels of a dashboard, rows' nested panels included.
inline void CollectPanels(const ir::Value& panels, std::vector<const ir::Value*>* out) {
  if (!panels.is_list()) return;
  for (const ir::Value& p : panels.as_list()) {
    out->push_back(&p);
    if (const ir::Value* nested = Field(p, "panels")) CollectPanels(*nested, out);
  }
}

inline absl::StatusOr<ir::Value> LoadDashboard(const std::string& path) { return ir::ParseJson(Slurp(path)); }

// Every `expr` of every panel target, and every templating query, of every
// shipped dashboard.
inline std::vector<DashboardQuery> DashboardQueries() {
  std::vector<DashboardQuery> out;
  for (const std::string& file : DeployFiles("grafana/dashboards", ".json")) {
    auto dash = LoadDashboard(file);
    if (!dash.ok()) continue;  // the manifests test reports parse errors
    std::string name = std::filesystem::path(file).filename().string();
    std::vector<const ir::Value*> panels;
    if (const ir::Value* p = Field(*dash, "panels")) CollectPanels(*p, &panels);
    for (const ir::Value* panel : panels) {
      const ir::Value* targets = Field(*panel, "targets");
      if (targets == nullptr || !targets->is_list()) continue;
      for (const ir::Value& t : targets->as_list())
        out.push_back({name, StringField(*panel, "title"), StringField(t, "expr")});
    }
    if (const ir::Value* templ = Field(*dash, "templating"))
      if (const ir::Value* list = Field(*templ, "list"); list != nullptr && list->is_list())
        for (const ir::Value& v : list->as_list())
          if (const ir::Value* q = Field(v, "query"); q != nullptr && q->is_string())
            out.push_back({name, "variable " + StringField(v, "name"), q->as_string()});
  }
  return out;
}

// Grafana's interval macros replaced by a fixed range, for running a
// dashboard query against Prometheus directly.
inline std::string WithoutGrafanaMacros(std::string expr) {
  for (const char* macro : {"$__rate_interval", "$__interval", "$__range"}) {
    for (size_t at = expr.find(macro); at != std::string::npos; at = expr.find(macro))
      expr.replace(at, std::strlen(macro), "1m");
  }
  return expr;
}

// The job names of deploy/prometheus/prometheus.yml.
inline std::vector<std::string> PrometheusJobNames(const YAML::Node& config) {
  std::vector<std::string> out;
  for (const auto& sc : config["scrape_configs"]) out.push_back(sc["job_name"].as<std::string>(""));
  return out;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_DEPLOY_DEPLOY_FILES_H_
