"""Card games: the shoe's shared rules, deal scripts, and one module of pure rules per game
family."""
