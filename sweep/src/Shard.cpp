#include "moesim/sweep/Shard.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/OutputFile.hpp"
#include "moesim/sweep/ResultLog.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;

namespace {

const std::string kManifestSuffix = ".shard.json";

/** A shard's manifest, read back. */
struct ShardFile {
  std::string results;
  std::string manifest;
  nlohmann::json spec;  ///< the sweep file as parsed when the shard ran
  std::string spec_file;
  Shard shard;
};

ShardFile read_manifest(const std::string& manifest) {
  auto doc = read_json_file(manifest);
  JsonObject o(doc, manifest);
  if (o.integer("schema_version") != 1) o.fail("schema_version", "must be 1");
  ShardFile f;
  f.manifest = manifest;
  f.results = manifest.substr(0, manifest.size() - kManifestSuffix.size());
  f.spec_file = o.string("spec_file");
  f.spec = o.raw("spec");
  f.shard = parse_shard(o.string("shard"), manifest + ": /shard");
  o.finish();
  if (!fs::exists(f.results))
    throw ConfigError(manifest, "", "its results file " + f.results + " is missing");
  return f;
}

/** The manifests under each argument: a directory's *.shard.json, or a results file's own manifest. */
std::vector<ShardFile> find_shards(const std::vector<std::string>& dirs) {
  std::vector<ShardFile> found;
  for (const auto& dir : dirs) {
    std::vector<std::string> manifests;
    if (fs::is_directory(dir)) {
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().string();
        if (name.size() > kManifestSuffix.size() &&
            name.compare(name.size() - kManifestSuffix.size(), kManifestSuffix.size(), kManifestSuffix) == 0)
          manifests.push_back(name);
      }
      std::sort(manifests.begin(), manifests.end());
      if (manifests.empty())
        throw ConfigError(dir, "", "holds no shard results (no *" + kManifestSuffix + ")");
    } else if (fs::exists(manifest_path(dir))) {
      manifests.push_back(manifest_path(dir));
    } else {
      throw ConfigError(dir, "", "is neither a directory of shard results nor a shard results file");
    }
    for (const auto& m : manifests) found.push_back(read_manifest(m));
  }
  return found;
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  Shard s;
  try {
    std::size_t used_k = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoi(text.substr(0, slash), &used_k);
    s.count = std::stoi(text.substr(slash + 1), &used_n);
    if (used_k != slash || used_n != text.size() - slash - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw ConfigError(flag, "", "got \"" + text + "\"; expected K/N (shard K of N, 1 <= K <= N)");
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw ConfigError(flag, "", "got \"" + text + "\"; expected K/N with 1 <= K <= N");
  return s;
}

std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& shard) {
  std::vector<Point> out;
  for (std::size_t i = static_cast<std::size_t>(shard.index - 1); i < points.size();
       i += static_cast<std::size_t>(shard.count))
    out.push_back(points[i]);
  return out;
}

std::string manifest_path(const std::string& results_path) {
  return results_path + kManifestSuffix;
}

void write_shard_manifest(const std::string& results_path, const std::string& spec_path, const Shard& shard) {
  nlohmann::ordered_json m;
  m["schema_version"] = 1;
  m["spec_file"] = spec_path;
  m["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  m["spec"] = read_json_file(spec_path);
  write_file_atomically(manifest_path(results_path), [&](std::ostream& out) { out << m.dump(2) << "\n"; });
}

MergeSummary merge_shards(const std::string& out, const std::vector<std::string>& dirs,
                          const std::vector<std::string>& metric_names) {
  auto shards = find_shards(dirs);
  const ShardFile& first = shards.front();
  // The first manifest's sweep is parsed the way `moesim sweep` parses a file (load_sweep).
  const SweepSpec spec = parse_sweep(first.spec.dump(), first.spec_file);
  const auto points = expand(spec);
  std::vector<bool> shard_seen(static_cast<std::size_t>(first.shard.count), false);
  std::map<std::string, std::string> lines, line_source;
  MergeSummary summary;
  summary.shards = first.shard.count;
  for (const auto& s : shards) {
    if (s.spec != first.spec || s.shard.count != first.shard.count)
      throw ConfigError(s.manifest, "", "comes from a different sweep or shard count than " + first.manifest);
    shard_seen[static_cast<std::size_t>(s.shard.index - 1)] = true;
    ResultLog log(s.results, spec.axis_names, metric_names, /*resume=*/true);
    for (auto& [id, line] : log.lines_by_id()) {
      auto [it, inserted] = lines.emplace(id, line);
      if (inserted) {
        line_source[id] = s.results;
      } else if (it->second != line) {
        throw ConfigError(s.results, "", "point " + id + " differs from its row in " + line_source[id]);
      } else {
        ++summary.duplicates;
      }
    }
    ++summary.files;
  }
  for (std::size_t k = 0; k < shard_seen.size(); ++k) {
    if (!shard_seen[k])
      throw ConfigError(out, "",
                        "shard " + std::to_string(k + 1) + "/" + std::to_string(shard_seen.size()) +
                            " is missing from the merged directories");
  }
  std::size_t missing = 0;
  std::string first_missing;
  for (const auto& p : points) {
    if (lines.count(p.id)) continue;
    if (missing++ == 0) first_missing = p.id;
  }
  if (missing > 0)
    throw ConfigError(out, "",
                      std::to_string(missing) + " of " + std::to_string(points.size()) +
                          " points have no row (first: " + first_missing +
                          "); finish their shards with --resume");
  if (lines.size() != points.size())
    throw ConfigError(out, "", "the shards hold rows for points that are not in the sweep");
  ResultLog merged(out, spec.axis_names, metric_names, /*resume=*/false);
  merged.write_in_order(lines, points);
  summary.points = points.size();
  return summary;
}

}  // namespace moesim::sweep
