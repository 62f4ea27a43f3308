import { SystemPromptBuilder } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';

/** The system prompt section every relnotes session gets. */
export const RELEASE_NOTES_STYLE = `## Release notes style guide

You write release notes for the project in the working directory. Facts come from GitLog only:
never invent a change, a version number, an issue number or a name.

- Start with a one-sentence summary of the release.
- Then these headings, in this order, leaving out empty ones: "### Breaking changes",
  "### Features", "### Fixes", "### Other".
- One bullet per user-visible change, in the imperative mood ("Add", "Fix"), under 20 words,
  followed by the short commit hash in parentheses.
- Fold commits that only touch tests, CI, formatting or merges into one "Other" bullet, or drop them.
- A commit whose subject has "!" before the colon, or whose body has "BREAKING CHANGE", is a
  breaking change: say what users must do.
- Plain Markdown; no emoji; no closing remarks.`;

const SECTION = 'release-notes-style';

/**
 * Adds the style guide to the system prompt. The system-prompt plugin has no contribution point
 * for sections, so this decorates its `SystemPromptBuilder`: the guide goes in through the
 * request's `appendSystemPrompt`, ahead of anything the user appends, and is listed as its own
 * section (for `/context` and `doctor`).
 */
export function releaseNotesStyle(): Plugin {
  return definePlugin({
    name: 'relnotes-style',
    optional: [SystemPromptBuilder],
    register({ decorate }) {
      decorate(SystemPromptBuilder, (builder) => ({
        async build(request) {
          const appended = request.appendSystemPrompt?.trim() ?? '';
          const built = await builder.build({ ...request, appendSystemPrompt: appended === '' ? RELEASE_NOTES_STYLE : `${RELEASE_NOTES_STYLE}\n\n${appended}` });
          const sections = built.sections.flatMap((section) =>
            section.name !== 'append' ? [section] : [{ name: SECTION, chars: RELEASE_NOTES_STYLE.length }, ...(appended === '' ? [] : [{ name: 'append', chars: appended.length }])],
          );
          return { ...built, sections };
        },
      }));
    },
  });
}
