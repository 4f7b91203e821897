from shapelint.rules import Rule

RULES: list[Rule] = []
