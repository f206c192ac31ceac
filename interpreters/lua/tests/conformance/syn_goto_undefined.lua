do goto nowhere end
