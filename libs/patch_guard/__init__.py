"""The patch guard: what a proposed repair may change, decided from the patch and the workspace.

Shared by the repairer, the validator and ``modelguard guard`` (services never import each other). Import
the submodules directly; this package imports nothing on its own:

- :mod:`.guard` runs every check (:func:`~libs.patch_guard.guard.check_patch`) into a
  :class:`~libs.patch_guard.report.GuardReport`;
- :mod:`.policy` reads the central policy's ``repair:`` section and narrows it by a workspace's config
  (:mod:`.workspace_config`);
- :mod:`.diff_parse` reads unified and git diffs exactly as ``git apply`` does (:mod:`.diff_headers`);
- :mod:`.code_checks` holds the allow-list of new code (:mod:`.module_uses`, :mod:`.new_code_allowlist`)
  and the always-refused constructs (:mod:`.always_refused`, :mod:`.refused_names`,
  :mod:`.changed_statements`, :mod:`.string_references`, :mod:`.identifier_scripts`,
  :mod:`.config_text_rules`);
- :mod:`.ast_rules` finds forbidden constructs, the second layer, on the syntax tree (:mod:`.constructs`,
  :mod:`.name_resolution`, :mod:`.path_values`), :mod:`.fragments` reads hunks when only they are known;
- :mod:`.generated_files` recognises generated files (:mod:`.gitattributes`);
- :mod:`.paths`, :mod:`.globs`, :mod:`.text_rules`, :mod:`.hunk_apply`, :mod:`.file_images` are the pieces.
"""
