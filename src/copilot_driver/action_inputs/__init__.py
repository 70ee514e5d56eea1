"""The composite GitHub Action's inputs (action.yml), read before anything starts.

`python -m copilot_driver.github_action` runs these readers, one per step of
action.yml. Any input that cannot be read raises InputError with one message
naming the input and the fix: the action stops before the Copilot CLI is
installed or a session exists. Pure but for the prompt file one writes.

    names.py         the inputs, the variables action.yml passes them in, InputError
    yaml_list.py     a YAML block list input -> its items (a strict subset, no PyYAML)
    policy.py        allowed-tools, denied-tools, allow-all -> the permission policy
    harness_args.py  sandbox, allowed-domains, pass-env -> the harness's arguments
    prompt.py        prompt or prompt-file -> the prompt file's path
"""
