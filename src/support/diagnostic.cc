#include "support/diagnostic.h"

namespace distir {

std::string_view LineOf(std::string_view text, int line) {
  if (line <= 0) return {};
  size_t begin = 0;
  for (int i = 1; i < line; ++i) {
    size_t nl = text.find('\n', begin);
    if (nl == std::string_view::npos) return {};
    begin = nl + 1;
  }
  size_t end = text.find('\n', begin);
  if (end == std::string_view::npos) end = text.size();
  return text.substr(begin, end - begin);
}

std::string RenderDiagnostic(const Status& status, std::string_view source) {
  std::string out;
  std::string where = status.loc().ToString();
  if (!where.empty()) out += where + ": ";
  out += "error: " + status.message() + "\n";
  const SourceLoc& loc = status.loc();
  if (!source.empty() && loc.line > 0 && loc.symbolic.empty()) {
    std::string_view line = LineOf(source, loc.line);
    out += std::string(line) + "\n";
    // Tabs are kept under the caret so it lines up in a terminal.
    std::string pad;
    for (int i = 1; i < loc.col && i <= static_cast<int>(line.size()); ++i) {
      pad += line[i - 1] == '\t' ? '\t' : ' ';
    }
    out += pad + "^\n";
  }
  for (const std::string& note : status.notes()) out += "note: " + note + "\n";
  return out;
}

}  // namespace distir
