// placeholder until the CPU backend adapter lands
